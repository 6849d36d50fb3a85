package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/internal/procs"
)

// daemonFlags declares the flags of the verbs that run the daemon in this
// process (serve, tray): the address to listen on and the log level.
func daemonFlags(fs *flag.FlagSet) (listen, logLevel *string) {
	listen = fs.String("listen", "", `loopback address to listen on (default: "listen" in config.json, 127.0.0.1:7391)`)
	logLevel = fs.String("log-level", "info", "debug, info, warn or error")
	return listen, logLevel
}

func serveVerb() verb {
	var listen, logLevel, registry *string
	var readTimeout, keepAlive *time.Duration
	var maxConns *int
	return verb{
		name:    "serve",
		noArgs:  true,
		summary: "run the daemon in the foreground (until Ctrl-C)",
		flags: func(fs *flag.FlagSet) {
			listen, logLevel = daemonFlags(fs)
			readTimeout = fs.Duration("read-timeout", daemon.DefaultReadTimeout,
				"close a connection that has not sent a whole request (headers and body) within this time")
			keepAlive = fs.Duration("keep-alive", daemon.DefaultKeepAlive,
				"send a call's response headers, then a keep-alive comment, whenever it has been silent this long (for clients and proxies that give up on silent responses)")
			maxConns = fs.Int("max-conns", daemon.DefaultMaxConns, "connections open at once; when all are taken, the oldest that has not presented a valid token is closed for a new one, else new ones wait")
			registry = fs.String("registry", "", "URL of the MCP registry the catalog reads (default: $"+daemon.RegistryEnv+", else the official one)")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet) error {
			logger, exe, err := loggerAndSelf(e, *logLevel, " for the reaper")
			if err != nil {
				return err
			}
			if path := os.Getenv(CPUProfileEnv); path != "" {
				stop, err := startCPUProfile(path)
				if err != nil {
					return err
				}
				defer stop()
			}
			if path := os.Getenv(AllocProfileEnv); path != "" {
				defer writeAllocProfile(logger, path)
			}
			defer adaptProcs(ctx, logger)()
			return daemon.Run(ctx, daemon.Options{
				Home: e.home, Listen: *listen, RegistryURL: *registry, Version: e.version, Logger: logger, Reaper: []string{exe}, Binary: exe,
				Dashboard: builtDashboard(), AutostartCommand: loginCommand(exe),
				HTTP: daemon.HTTPLimits{ReadTimeout: *readTimeout, MaxConns: *maxConns}, KeepAlive: *keepAlive,
				RuntimeStats: os.Getenv(daemon.RuntimeStatsEnv) == "1",
				Ready: func(info daemon.Info) {
					fmt.Fprintf(e.stdout, "Switchboard %s is running (pid %d)\n", e.version, info.PID)
					fmt.Fprintf(e.stdout, "  MCP:     %s/mcp (every server), %s/mcp/<server> (one), %s/mcp/p/<profile> (a profile's)\n", info.Address, info.Address, info.Address)
					fmt.Fprintf(e.stdout, "  API:     %s\n", info.APIURL())
					fmt.Fprintf(e.stdout, "  UI:      %s/ (sign in with `switchboard open`)\n", info.Address)
					fmt.Fprintf(e.stdout, "  data:    %s\n", info.Home)
					fmt.Fprintf(e.stdout, "Press Ctrl-C to stop every server and quit.\n")
				},
			})
		},
	}
}

// adaptProcs sizes the Go scheduler to the daemon's load (package procs)
// until the returned stop is called.
func adaptProcs(ctx context.Context, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var adapting sync.WaitGroup
	adapting.Go(func() { procs.Adapt(ctx, log) })
	return func() {
		cancel()
		adapting.Wait()
	}
}

// CPUProfileEnv, set to a file name, makes `serve` write a CPU profile of
// the daemon there until it stops (Ctrl-C, SIGTERM or `switchboard quit`;
// not when killed): for finding where a benchmark's time goes, with
// `go tool pprof -top FILE`.
const CPUProfileEnv = "SWITCHBOARD_CPUPROFILE"

func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", CPUProfileEnv, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", CPUProfileEnv, err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// AllocProfileEnv, set to a file name, makes `serve` write the profile of
// every allocation since it started there when it stops (as
// CPUProfileEnv's): `go tool pprof -sample_index=alloc_space -top FILE`.
const AllocProfileEnv = "SWITCHBOARD_ALLOCPROFILE"

// writeAllocProfile writes the allocation profile to path; a failure is
// logged, the daemon has stopped by then.
func writeAllocProfile(log *slog.Logger, path string) {
	f, err := os.Create(path)
	if err != nil {
		log.Error("writing the allocation profile", "env", AllocProfileEnv, "err", err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		log.Error("writing the allocation profile", "env", AllocProfileEnv, "err", err)
	}
}

// loginCommand is what starts Switchboard at login, for the daemon run by
// exe: the tray program beside it if there is one (the app as users know
// it), else this program's daemon.
func loginCommand(exe string) []string {
	tray := filepath.Join(filepath.Dir(exe), "switchboard-tray")
	if runtime.GOOS == "windows" {
		tray += ".exe"
	}
	if st, err := os.Stat(tray); err == nil && !st.IsDir() {
		return []string{tray}
	}
	return []string{exe, "serve"}
}
