import {Flags} from '@oclif/core'

import type {VideoSubmission, VideoTask} from '../../api/videos.js'
import {BaseCommand} from '../../core/base-command.js'
import {StatusLine, out, savedLine} from '../../core/output.js'
import {DEFAULT_FRAMES_SHAPE} from '../../services/video-request.js'
import {createVideoTask} from '../../services/video-tasks.js'
import {downloadProgress, note, printTask, printWarnings, waitProgress} from '../../cli/video-print.js'

export default class VideoCreate extends BaseCommand {
  static summary = 'Creates a video generation task (Alpha or Beta model).'
  static description =
    'Checks the request against the rules of the chosen model before anything is sent, then creates the task once ' +
    'and records it in the local journal (`gwctl video list`). With --wait it polls until the task ends; with ' +
    '--output it also downloads the video. Fields gwctl has no flag for go through --param; the provider-native ' +
    'format through --native-input/--native-parameters.'

  static examples = [
    '<%= config.bin %> video create --model Alpha2.6-T2V --prompt "a red fox in snow" --seconds 5 --size 1280x720',
    '<%= config.bin %> video create --model BetaQ3-Turbo-Text2Video --prompt "waves at dusk" --resolution 1080P --size 1920*1080 --output waves.mp4',
    '<%= config.bin %> video create --model BetaQ3-Pro-Start-End2Video --prompt "the flower opens" --first-frame https://x/a.png --last-frame https://x/b.png --resolution 720P --wait',
    '<%= config.bin %> video create --model BetaQ2-Pro-Reference2Video --prompt "the cat dances" --ref-image https://x/cat.png --duration 0',
    '<%= config.bin %> video create --model betaq3-turbo-text2video --native-input \'{"prompt":"a cat"}\' --native-parameters \'{"duration":5}\'',
  ]

  static flags = {
    model: Flags.string({
      char: 'm',
      description: 'Model name (see `gwctl video models`).',
      required: true,
      env: 'GWCTL_VIDEO_MODEL',
    }),
    prompt: Flags.string({char: 'p', description: 'What the video shows (Beta: at most 5000 characters).'}),
    'img-url': Flags.string({
      description: 'Image URL of an image-to-video model (Alpha2.6-I2V, Beta *-Img2Video).',
    }),
    'ref-video': Flags.string({
      description: 'Reference video URL (repeatable): Alpha2.6-R2V, BetaQ2-Pro-Reference2Video (1-2).',
      multiple: true,
    }),
    seconds: Flags.string({description: 'Alpha: length in seconds, a positive integer.'}),
    size: Flags.string({
      description:
        'width*height (x accepted, sent as *); see `gwctl video models` for the sizes of each tier.',
    }),
    'no-prompt-extend': Flags.boolean({
      description: 'Alpha: send prompt_extend=false (the platform rewrites prompts by default).',
    }),
    'shot-type': Flags.string({
      description: 'Alpha: single or multi (default multi).',
      options: ['single', 'multi'],
    }),
    'audio-url': Flags.string({description: 'Alpha: audio URL that drives the sound of the video.'}),
    'callback-url': Flags.string({description: 'Alpha: URL that receives the task result.'}),
    'first-frame': Flags.string({description: 'Beta first-and-last-frame: URL of the first frame.'}),
    'last-frame': Flags.string({description: 'Beta first-and-last-frame: URL of the last frame.'}),
    'ref-image': Flags.string({
      description: 'Beta reference-to-video: image URL (repeatable; 1-7, 1-4 with videos).',
      multiple: true,
    }),
    duration: Flags.string({
      char: 'd',
      description:
        'Beta: length in seconds (range per model, default 5; 0 = auto on BetaQ2-Pro-Reference2Video).',
    }),
    resolution: Flags.string({
      char: 'r',
      description: 'Beta: 540P, 720P or 1080P (lower case accepted). Required for first-and-last-frame.',
    }),
    audio: Flags.boolean({description: 'Beta: generate audio (Q3 models).', allowNo: true}),
    watermark: Flags.boolean({
      description: 'Beta: add the "AI-generated" mark at the bottom right.',
      allowNo: true,
    }),
    seed: Flags.string({description: 'Beta: seed, 0 to 2147483647.'}),
    'frames-as': Flags.string({
      description:
        'Wire shape of the two frames: named fields (first_frame_url/last_frame_url) or a two-element reference_images array.',
      options: ['fields', 'reference-images'],
      default: DEFAULT_FRAMES_SHAPE,
      env: 'GWCTL_VIDEO_FRAMES_AS',
    }),
    param: Flags.string({
      description:
        'Extra body field key=value (repeatable), passed through; the value is JSON when it parses.',
      multiple: true,
    }),
    'native-input': Flags.string({
      description: 'Provider-native `input` object as JSON (model name sent in lower case).',
    }),
    'native-parameters': Flags.string({description: 'Provider-native `parameters` object as JSON.'}),
    'no-validate': Flags.boolean({
      description:
        'Send the request without checking the documented rules of the model (sizes, durations, fields).',
    }),
    wait: Flags.boolean({char: 'w', description: 'Poll until the task completes or fails.'}),
    interval: Flags.integer({
      description: 'Seconds between polls (default: setting video.interval, else 15).',
      min: 1,
      env: 'GWCTL_VIDEO_INTERVAL',
    }),
    timeout: Flags.integer({
      description: 'Stop waiting after this many seconds (0 = never; the task keeps running).',
      min: 0,
    }),
    output: Flags.string({
      char: 'o',
      description: 'Download the finished video to this file (implies --wait).',
    }),
    force: Flags.boolean({description: 'Overwrite the --output file if it exists.'}),
  }

  async run(): Promise<(VideoSubmission | VideoTask) & {download?: {path: string; bytes: number}}> {
    const {flags} = await this.parse(VideoCreate)
    const line = new StatusLine()
    const result = await createVideoTask(
      {
        model: flags.model,
        prompt: flags.prompt,
        imgUrl: flags['img-url'],
        refVideos: flags['ref-video'],
        seconds: flags.seconds,
        size: flags.size,
        promptExtend: flags['no-prompt-extend'] ? false : undefined,
        shotType: flags['shot-type'],
        audioUrl: flags['audio-url'],
        callbackUrl: flags['callback-url'],
        firstFrame: flags['first-frame'],
        lastFrame: flags['last-frame'],
        refImages: flags['ref-image'],
        duration: flags.duration,
        resolution: flags.resolution,
        audio: flags.audio,
        watermark: flags.watermark,
        seed: flags.seed,
        framesAs: flags['frames-as'] as 'fields' | 'reference-images',
        params: flags.param,
        nativeInput: flags['native-input'],
        nativeParameters: flags['native-parameters'],
        validate: !flags['no-validate'],
      },
      {
        wait: flags.wait,
        output: flags.output,
        force: flags.force,
        intervalSeconds: flags.interval,
        timeoutSeconds: flags.timeout,
        signal: this.signal,
        onWarnings: printWarnings,
        onProgress: waitProgress(line),
        onDownloadProgress: downloadProgress(line),
      },
    ).finally(() => line.done())
    const task = {
      ...result.submission,
      ...result.task,
      ...(result.download ? {download: result.download} : {}),
    }
    if (!this.jsonEnabled()) {
      printTask(task)
      if (result.download) out(savedLine(result.download.path, result.download.bytes))
      if (!result.task) note(`Follow it: gwctl video poll ${result.submission.id}`)
    }
    return task
  }
}
