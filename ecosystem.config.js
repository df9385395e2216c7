// PM2 process file for the executive daemon.
//
//   pm2 start ecosystem.config.js      start (reads EXECUTIVE_HOME from the shell, see below)
//   pm2 logs executive --raw | jq -R 'fromjson? // empty'    follow the JSON log lines
//   pm2 save && pm2 startup            survive reboots
//
// Step-by-step setup and the traps are in deploy/README.md.
//
// One app only. The daily 04:00 snapshot runs inside the daemon (APScheduler). Do NOT add a
// second "snapshot" app with cron_restart: the embedded memory store is locked by the running
// daemon, and `executive mem snapshot` talks to that daemon over its control socket anyway.

"use strict";

const fs = require("fs");
const os = require("os");
const path = require("path");

// The package's own version, so `pm2 ls` / `pm2 show` say which code runs. PM2 itself shows
// the version of the package.json beside the script (here the repository's, kept equal to
// this one by tests/test_deploy.py); `version` below is what `pm2 show` prints before start.
const versionMatch = fs
  .readFileSync(path.join(__dirname, "src", "executive", "__init__.py"), "utf8")
  .match(/__version__ = "([^"]+)"/);
const version = versionMatch ? versionMatch[1] : "unknown";

// The daemon lets the running iteration finish for EXECUTIVE_SHUTDOWN_GRACE_SECONDS (default
// 30 s) after SIGINT, then cancels it. PM2 must wait longer than that before its SIGKILL.
// If you raise the grace period, export it before `pm2 start` so this file sees it too
// (a value set only in <home>/.env.executive is invisible here).
const graceSeconds = Number(process.env.EXECUTIVE_SHUTDOWN_GRACE_SECONDS) || 30;
const killTimeoutMs = Math.max(45000, (graceSeconds + 15) * 1000);

// PM2 owns the log files (one JSON object per line, written by the daemon itself).
// Default: next to PM2's own logs, so nothing is written into the git checkout.
const logDir =
  process.env.EXECUTIVE_LOG_DIR ||
  path.join(process.env.PM2_HOME || path.join(os.homedir(), ".pm2"), "logs");

module.exports = {
  apps: [
    {
      name: "executive",
      version,

      // The venv's console-script entry point, run directly: its shebang already points at
      // .venv/bin/python, so interpreter "none" makes PM2 exec it with no node or shell wrapper.
      // The PID PM2 watches and signals is then the Python daemon itself.
      // Equivalent: script ".venv/bin/python", args "-m executive run" (also interpreter "none").
      script: path.join(__dirname, ".venv", "bin", "executive"),
      args: "run",
      interpreter: "none",
      cwd: __dirname,

      // Fork mode, one instance: cluster mode is for Node apps, and a second copy of the
      // daemon could not open the locked embedded store anyway.
      exec_mode: "fork",
      instances: 1,
      watch: false,

      env: {
        // Without it Python block-buffers stdout when it is a pipe, and log lines show up
        // late, in bursts, or not at all after a crash.
        PYTHONUNBUFFERED: "1",
        // The agent home (a git repository made by `executive init`). Read from the shell
        // that runs `pm2 start`; the fallback is a scratch home inside the checkout for tries.
        // Never a secret in this file (it lives in the git checkout). The executive's own
        // (store key or URL, dashboard token) go in <home>/.env.executive (mode 0600); the
        // Claude CLI's credentials (ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN) are read from
        // the process environment: export them in the shell that runs `pm2 start` (PM2 passes
        // its environment on), or log in once with `claude` as the daemon's user.
        EXECUTIVE_HOME: process.env.EXECUTIVE_HOME || `${__dirname}/demo-home`,
      },

      // Restart policy.
      // autorestart: also after a clean exit 0. That is how SIGUSR2 works: the daemon finishes
      // the iteration, exits 0, and PM2 starts it again with the new code. So never set
      // stop_exit_codes: [0].
      autorestart: true,
      // Exit 2 is a configuration error (a bad flag, a misspelt value): restarting cannot fix
      // it, so PM2 stops instead of looping; the error is the last line of executive.out.log
      // (one JSON object, event "configuration.invalid"). Exit 4: another daemon already
      // runs on this home (its pid is in the message on executive.err.log); a restart would
      // meet it again.
      stop_exit_codes: [2, 4],
      // Exits sooner than this count as unstable (start-up, memory store and embedding model
      // included, takes about two seconds).
      min_uptime: "30s",
      // After this many unstable restarts in a row PM2 gives up (status "errored").
      max_restarts: 10,
      // No restart_delay / exp_backoff_restart_delay: with either set, PM2 (7.x, God.js
      // handleExit) marks an app that exits with a stop_exit_codes code "waiting restart"
      // for ever instead of "stopped". The daemon does not crash on a store outage or a bad
      // bundle (those are values and needs-you entries), so a crash loop is rare, and
      // max_restarts ends one.
      // The embedded store plus the ONNX embedding model use ~200 MB; above 1.5 GB something
      // leaks. PM2 checks the daemon's own process every ~30 s (workers are not counted) and
      // restarts it gracefully (SIGINT, then kill_timeout).
      max_memory_restart: "1500M",

      // Shutdown. PM2 sends SIGINT (its default kill signal), which the daemon handles like
      // SIGTERM: stop taking work, let the iteration finish, exit 0. PM2's default kill_timeout
      // is 1600 ms, which would SIGKILL it mid-iteration.
      kill_timeout: killTimeoutMs,
      // Signal the daemon only. With PM2's default (treekill: true) SIGINT also hits every
      // worker (Claude Code, node, git...) at the same instant, killing in-flight work the
      // daemon wants to let finish. The daemon runs its workers in their own process groups
      // and ends them itself on shutdown (the PM2 analogue of systemd's KillMode=mixed).
      treekill: false,
      // wait_ready / listen_timeout are deliberately absent: they wait for Node's
      // process.send("ready"), which a Python process cannot send. min_uptime stands in.

      // Logs: stdout carries the JSON lines; stderr only gets what escapes logging (e.g. a
      // traceback before logging is set up). No PM2 timestamps (time / log_date_format): every
      // line already has its own, and a prefix would break `jq`. Rotate with pm2-logrotate.
      out_file: path.join(logDir, "executive.out.log"),
      error_file: path.join(logDir, "executive.err.log"),
      merge_logs: true,
      time: false,
    },
  ],
};
