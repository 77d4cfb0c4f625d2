// A preload that profiles every `acp` process it is loaded into: the inspector's sampling profiler from start to
// exit, written to `$ACP_BENCH_PROFILE_DIR/acp-<pid>.cpuprofile` (open in Chrome's DevTools or any .cpuprofile
// reader). `node --cpu-prof` does the same for one command, but Node refuses it in NODE_OPTIONS, which is how
// the proxy bench reaches the processes its clients spawn:
//   ACP_BENCH_PROFILE_DIR=/tmp/prof ACP_BENCH_NODE_OPTIONS=--import=$PWD/bench/proxy/profile-preload.mjs \
//     ACP_BENCH_PROXY_ONLY="acp proxy,1,stdio" node bench/suites/proxy.mjs
import { Session } from "node:inspector";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.env.ACP_BENCH_PROFILE_DIR;
if (dir !== undefined && dir !== "" && process.argv.some((a) => /[/\\]bin[/\\]acp\.js$/.test(a))) {
  const session = new Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.setSamplingInterval", { interval: 200 });
  session.post("Profiler.start");
  process.on("exit", () => {
    // the inspector answers synchronously on the same thread: the file is written before the process ends
    session.post("Profiler.stop", (err, result) => {
      if (err !== null) return;
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `acp-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
