/**
 * Notes a service leaves for the user while it works: a fact worth knowing that changes neither
 * the output nor the exit code (rows of the gateway's log that could not be applied to logs.db
 * yet, services/log-pending.ts). Services never print; a command prints what was left here as
 * warnings on stderr when it ends (`BaseCommand.finally`), so `--json` on stdout stays one
 * document.
 */
const notices: string[] = []

/** Leaves a note (the same text once). */
export function addNotice(message: string): void {
  if (!notices.includes(message)) notices.push(message)
}

/** The notes left so far, removed. */
export function takeNotices(): string[] {
  return notices.splice(0)
}
