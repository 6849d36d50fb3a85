// Package supervisor runs local stdio MCP servers as pools of OS processes.
//
// The supervisor owns every process it starts: it creates the pipes, puts the
// child in its own process group (a Job Object on Windows), performs the MCP
// initialize handshake once per process through the go-sdk client, and hands
// callers a ready [mcp.ClientSession] through a [Lease]. Nothing above this
// package ever sees an exec.Cmd.
//
// The shape of the package:
//
//	Supervisor ── one Pool per configured server (Apply adds, updates, removes)
//	   Pool     ── one goroutine (run) owns the pool's state: its processes,
//	   │           waiters, backoff and idle timers; everything else talks to it
//	   │           through channels
//	   └── proc ── one goroutine (supervise) per OS process: spawn, handshake,
//	               wait for exit or a stop request, escalate the shutdown
//
// Leak-proofing has three layers, so no server outlives the daemon:
//   - every process leads its own process group, and stopping signals the
//     whole group (servers under npx or uvx are grandchildren);
//   - a tiny watchdog process (the reaper) holds the read end of a pipe from
//     the daemon and kills every recorded group when that pipe closes, which
//     the kernel does even when the daemon dies by SIGKILL;
//   - a registry file records each process's pid and start time, and the next
//     daemon sweeps any survivor whose pid and start time still match.
//
// Supervisor imports nothing of the app: it knows servers only as [Spec]s.
package supervisor
