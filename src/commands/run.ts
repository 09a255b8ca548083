import {constants} from 'node:os'

import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../core/base-command.js'
import {UsageError} from '../core/errors.js'
import {colorErr, err} from '../core/output.js'

export default class Run extends BaseCommand {
  static summary = 'Runs a coding agent through the gateway for this one process, with no file touched.'
  static description =
    "Starts the agent's own executable with the arguments after --, pointed at the running gateway by environment variables and its own command-line overrides only: " +
    'Claude Code ANTHROPIC_BASE_URL + ANTHROPIC_AUTH_TOKEN; Codex -c model_provider overrides with the key in a variable; ' +
    'Gemini CLI GOOGLE_GEMINI_BASE_URL + GEMINI_API_KEY (and a gwctl-owned system settings copy selecting API-key auth). ' +
    "The key is the agent name's own, issued on the first run and reused; an agent bound with `gwctl agents enable` runs with its binding's key. " +
    "When the gateway learned the context window of the model behind the run's route (from its refusal of a longer prompt), the agent is told it so that it compacts in time: CLAUDE_CODE_AUTO_COMPACT_WINDOW, Codex's -c model_context_window and model_auto_compact_token_limit, or Gemini CLI's model.compressionThreshold in a system defaults file of the run's own (GEMINI_CLI_SYSTEM_DEFAULTS_PATH, removed when it ends); a window the user set stands. " +
    "Standard streams, the terminal, signals and the exit status are the agent's."

  static examples = [
    '<%= config.bin %> run claude-code -- -p "explain this repo"',
    '<%= config.bin %> run codex --policy cheap -- exec "fix the failing test"',
    '<%= config.bin %> run gemini-cli --agent-name review-bot -- -p "review the diff"',
    '<%= config.bin %> run claude-code --start',
  ]

  // the agent owns stdout: no --json
  static enableJsonFlag = false
  static strict = false

  static args = {
    agent: Args.string({
      description: 'claude-code (or claude), codex, gemini-cli (or gemini).',
      required: true,
      ignoreStdin: true,
    }),
  }

  static flags = {
    policy: Flags.string({
      description: "Policy of the run's key (an agent bound by `agents enable` keeps its binding's).",
    }),
    'agent-name': Flags.string({
      description: 'Gateway agent the requests are logged under (default: the tool name).',
    }),
    start: Flags.boolean({description: 'Start the gateway when it is not running (else exit 6).'}),
    quiet: Flags.boolean({char: 'q', description: "Print nothing of gwctl's own (only the agent speaks)."}),
  }

  async run(): Promise<void> {
    const dash = this.argv.indexOf('--')
    const ours = dash === -1 ? this.argv : this.argv.slice(0, dash)
    const theirs = dash === -1 ? [] : this.argv.slice(dash + 1)
    const {args, flags, argv} = await this.parse(Run, ours)
    if (argv.length > 1) {
      throw new UsageError(
        `Unexpected argument "${String(argv[1])}": the agent's own arguments go after --.`,
        {
          code: 'invalid_flags',
          hint: `For example: gwctl run ${args.agent} -- ${argv.slice(1).join(' ')}`,
        },
      )
    }
    const {prepareRun, runAgent} = await import('../services/agent-run.js')
    const plan = await prepareRun({
      agent: args.agent,
      agentName: flags['agent-name'],
      policyId: flags.policy,
      start: flags.start,
      signal: this.signal,
      args: theirs,
    })
    if (!flags.quiet) {
      const how =
        plan.keySource === 'binding'
          ? "its bound config's key"
          : plan.keySource === 'issued'
            ? 'a key issued now'
            : 'its run key'
      err(
        colorErr().dim(
          `gwctl: ${plan.tool} through the gateway at ${plan.origin}${plan.startedGateway ? ` (started now: ${plan.startedGateway})` : ''}: agent ${plan.agentName}, ${how} ${plan.keyPrefix}, policy ${plan.policyId}` +
            (plan.window
              ? `; ${plan.window.provider} ${plan.window.model} holds ${plan.window.tokens.toLocaleString('en-US')} tokens (its refusal said so): ${plan.window.told} set, so it compacts in time`
              : ''),
        ),
      )
    }
    // from here the agent's: Ctrl-C and SIGTERM are its to handle (runAgent forwards what the
    // terminal does not deliver itself), and gwctl waits for it
    this.releaseSignals()
    const exit = await runAgent(plan, theirs)
    if (exit.signal) {
      // end the way the agent ended, so a shell sees the same status (128 + n)
      process.kill(process.pid, exit.signal)
      await new Promise((resolve) => setTimeout(resolve, 1000))
      this.exit(128 + (constants.signals[exit.signal] ?? 0))
    }
    this.exit(exit.code ?? 1)
  }
}
