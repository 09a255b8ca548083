"""Runs a command in a pseudo-terminal (COLSxROWS from PTY_SIZE, default 80x24) and obeys one
JSON command per line on stdin, answering one JSON line each on stdout:
  {"send": "text"}                      -> {"ok": true}
  {"expect": "text", "timeout": 5}      -> {"ok": true|false, "ms": elapsed} (text appearing in
                                           the output after the last `mark`, escapes removed)
  {"mark": true}                        -> {"ok": true}  (later expects only see newer output)
  {"wait": 5}                           -> {"ok": true, "exit": code|null}  (waits for the exit)
  {"output": true}                      -> {"ok": true, "output": text}
Used by tests of the terminal app: the test makes requests between commands."""
import fcntl, json, os, pty, re, select, struct, sys, termios, time

cols, rows = (int(x) for x in os.environ.get('PTY_SIZE', '80x24').split('x'))
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack('HHHH', rows, cols, 0, 0))
    os.execvp(sys.argv[1], sys.argv[1:])

out = b''
mark = 0
status = []
ANSI = re.compile(rb'\x1b\[[0-9;?]*[a-zA-Z]|\x1b\][^\x07]*\x07')

def pump(seconds):
    global out
    r, _, _ = select.select([fd], [], [], seconds)
    if r:
        try:
            out += os.read(fd, 65536)
        except OSError:
            time.sleep(0.02)

def exited():
    if not status:
        p, st = os.waitpid(pid, os.WNOHANG)
        if p:
            status.append(os.waitstatus_to_exitcode(st))
    return bool(status)

def text(since):
    return ANSI.sub(b'', out[since:]).decode('utf-8', 'replace')

def reply(obj):
    sys.stdout.write(json.dumps(obj) + '\n')
    sys.stdout.flush()

for line in sys.stdin:
    cmd = json.loads(line)
    if 'send' in cmd:
        os.write(fd, cmd['send'].encode())
        reply({'ok': True})
    elif 'mark' in cmd:
        pump(0)
        mark = len(out)
        reply({'ok': True})
    elif 'expect' in cmd:
        start = time.time()
        end = start + cmd.get('timeout', 5)
        while cmd['expect'] not in text(mark) and time.time() < end:
            pump(0.02)
        reply({'ok': cmd['expect'] in text(mark), 'ms': round((time.time() - start) * 1000)})
    elif 'wait' in cmd:
        end = time.time() + cmd['wait']
        while not exited() and time.time() < end:
            pump(0.05)
        reply({'ok': True, 'exit': status[0] if status else None})
    elif 'output' in cmd:
        pump(0)
        reply({'ok': True, 'output': text(0)})

if not exited():
    os.kill(pid, 9)
    os.waitpid(pid, 0)
