"""Runs a command in a pseudo-terminal (100x30), waits until `expect` appears in its output,
types `keys`, and prints {"exit": code, "output": text} as JSON. For tests of terminal UIs."""
import fcntl, json, os, pty, select, struct, sys, termios, time

expect, keys, args = sys.argv[1], sys.argv[2], sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack('HHHH', 30, 100, 0, 0))
    os.execvp(args[0], args)

out = b''

def read_until(pred, seconds):
    global out
    end = time.time() + seconds
    while time.time() < end and not pred():
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                time.sleep(0.05)
                continue
            out += chunk

read_until(lambda: expect.encode() in out, 20)
if keys:
    os.write(fd, keys.encode())
done = []
def exited():
    if not done:
        p, status = os.waitpid(pid, os.WNOHANG)
        if p:
            done.append(os.waitstatus_to_exitcode(status))
    return bool(done)
read_until(exited, 10)
if not exited():
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    done.append(-9)
print(json.dumps({'exit': done[0], 'output': out.decode('utf-8', 'replace')}))
