/**
 * The base of every gwctl command: `--json` and `--verbose`, Ctrl-C handling, and the one place
 * where errors become output and exit codes.
 */
import {Command, Flags} from '@oclif/core'

import {ExitCode, GwError, InterruptedError, UsageError, fileSystemError} from './errors.js'
import {takeNotices} from './notices.js'
import {colorErr, err as printErr, warn} from './output.js'
import {roundDollars} from './usd.js'
import {closest} from './suggest.js'

export abstract class BaseCommand extends Command {
  static enableJsonFlag = true

  static baseFlags = {
    verbose: Flags.boolean({
      description: 'Show more detail: request ids, upstream details, stacks of unexpected errors.',
      helpGroup: 'GLOBAL',
      env: 'GWCTL_VERBOSE',
    }),
  }

  private readonly controller = new AbortController()
  private interrupts = 0
  private readonly onSigint = (): void => {
    this.interrupts++
    // A second Ctrl-C leaves at once even if something ignores the abort.
    if (this.interrupts > 1) process.exit(ExitCode.interrupted)
    this.controller.abort(new InterruptedError())
  }

  /** Aborted on Ctrl-C / SIGTERM; pass it to every service call. */
  protected get signal(): AbortSignal {
    return this.controller.signal
  }

  /** True when `--verbose` was given (read from argv so it works before and after parse). */
  protected get verbose(): boolean {
    return (
      this.argv.includes('--verbose') ||
      process.env.GWCTL_VERBOSE === '1' ||
      process.env.GWCTL_VERBOSE === 'true'
    )
  }

  /** Lets a command handle SIGINT itself (the chat REPL cancels a reply but stays). */
  protected releaseSigint(): void {
    process.off('SIGINT', this.onSigint)
  }

  /** Lets a command handle SIGINT and SIGTERM itself (the gateway daemon drains on either). */
  protected releaseSignals(): void {
    process.off('SIGINT', this.onSigint)
    process.off('SIGTERM', this.onSigint)
  }

  async init(): Promise<void> {
    await super.init()
    process.on('SIGINT', this.onSigint)
    process.on('SIGTERM', this.onSigint)
  }

  /** What `--json` prints: the command's result, its dollar amounts rounded alike everywhere. */
  protected toSuccessJson<T>(result: T): T {
    return roundDollars(result)
  }

  /**
   * Prints `--json` output. oclif's own pretty-prints the JSON, then splits it into tokens with a
   * dozen regular expressions and joins them again, colouring each by the theme's `json` colours:
   * about 3 ms of a cold process for a `usage --json`, to print the same bytes when there is no
   * such theme (gwctl ships none; a user's `theme.json` may add one, and then oclif's path runs).
   */
  protected logJson(json: unknown): void {
    if (this.config.theme?.json) return super.logJson(json)
    // as oclif's `ux.stdout` writes it (console.log: a newline, stream errors ignored)
    console.log(JSON.stringify(json, null, 2))
  }

  async finally(error: Error | undefined): Promise<void> {
    process.off('SIGINT', this.onSigint)
    process.off('SIGTERM', this.onSigint)
    for (const notice of takeNotices()) warn(notice)
    await super.finally(error)
  }

  /** For "Nonexistent flag: --promt", the flag of this command it is a typo of (`--prompt`). */
  private nearFlag(message: string): string | undefined {
    const typed = /Nonexistent flags?: (--?[\w-]+)/.exec(message)?.[1]
    if (!typed || !typed.startsWith('--')) return undefined
    const flags = Object.keys((this.constructor as {flags?: Record<string, unknown>}).flags ?? {})
    const name = closest(typed.slice(2), [...flags, 'json', 'verbose', 'help'])
    return name ? `--${name}` : undefined
  }

  async catch(error: Error & {exitCode?: number; oclif?: {exit?: number}; parse?: unknown}): Promise<never> {
    // oclif's own exit (this.exit) passes through untouched.
    if ((error as {code?: string}).code === 'EEXIT') throw error
    let gw = toGwError(error, this.controller.signal.aborted)
    if (gw.code === 'invalid_flags' && this.id) {
      const near = this.nearFlag(gw.message)
      gw = new UsageError(gw.message, {
        code: gw.code,
        hint: `${near ? `Did you mean \`${near}\`? ` : ''}Run \`gwctl ${this.id.replaceAll(':', ' ')} --help\` for its usage.`,
      })
    }
    if (this.jsonEnabled()) {
      process.stdout.write(JSON.stringify(gw.toJSON(), null, 2) + '\n')
    } else {
      const c = colorErr()
      printErr(c.red(`Error: ${gw.message}`))
      if (gw.details && this.verbose) {
        for (const [key, value] of Object.entries(gw.details)) printErr(c.dim(`  ${key}: ${String(value)}`))
      } else if (gw.details?.platform_id) {
        printErr(c.dim(`  platform_id: ${String(gw.details.platform_id)}`))
      }
      if (gw.hint) printErr(c.dim(gw.hint))
      if (gw.exitCode === ExitCode.unexpected && this.verbose && error.stack) printErr(c.dim(error.stack))
    }
    this.exit(gw.exitCode)
  }
}

/** Any thrown value as a GwError: oclif parse errors are usage errors; the rest is unexpected. */
export function toGwError(error: unknown, aborted = false): GwError {
  if (error instanceof GwError) return error
  const e = error as Error & {oclif?: {exit?: number}; parse?: unknown; code?: string}
  if (aborted || e?.name === 'AbortError') return new InterruptedError()
  if (
    e?.parse !== undefined ||
    e?.oclif?.exit === 2 ||
    /^(Missing|Unexpected|Expected|Nonexistent|Parsing|The following error)/.test(e?.message ?? '')
  ) {
    // oclif ends some messages with its own "See more help with --help": the hint says it once.
    // A single error comes without oclif's "The following error occurred:" wrapper, and a
    // missing flag is named as it is typed (`--model`, not `model`).
    const message = stripAnsi(e.message)
      .replace(/\n?See more help with --help\s*$/, '')
      .replace(/^The following error occurred:\n\s*([^\n]*)$/, '$1')
      .replace(/^(\s*)Missing required flag (\w[\w-]*)$/gm, '$1Missing required flag --$2')
      .replace(/^Parsing (--[\w-]+)\s*\n\s*/, '$1: ')
      .trimEnd()
    return new UsageError(message, {
      code: 'invalid_flags',
      hint: 'See --help for the flags of this command.',
    })
  }
  const fs = fileSystemError(error)
  if (fs) return fs
  return new GwError('unexpected', e?.message ?? String(error), ExitCode.unexpected, {
    hint: 'This is a bug in gwctl; run again with --verbose for the stack.',
  })
}

function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;]*m/g, '')
}
