package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/secrets"
	"github.com/switchboardhq/switchboard/app/tokens"
)

// conformanceClientEnv makes this test binary the conformance suite's
// client command (see TestMain) instead of running the tests;
// conformanceBinaryEnv gives it the switchboard binary TestMain built.
const (
	conformanceClientEnv = "SWITCHBOARD_E2E_CONFORMANCE_CLIENT"
	conformanceBinaryEnv = "SWITCHBOARD_E2E_CONFORMANCE_BINARY"
)

// conformanceServer is the name of the scenario's server in the daemon's
// config; the client calls it on /mcp/conformance.
const conformanceServer = "conformance"

// conformanceClientSecret is the name of the secret, in the daemon's
// secret store under conformanceServer, holding a pre-registered client's
// secret (the scenario's; config.json only names it).
const conformanceClientSecret = "oauth-client-secret"

// TestConformanceAuthThroughTheDaemon runs the official conformance
// suite's client authorization scenarios (the "auth" suite and the two
// 2025-03-26 back-compat ones, as app/remoteauth's test does) against a
// real daemon: for each scenario the suite runs this test binary as the
// client (conformanceClientMain), which configures the scenario's MCP
// server as a remote server of a fresh Switchboard home, starts
// `switchboard serve`, calls the scenario's tool through /mcp/conformance
// and signs in with `switchboard auth login` whenever the daemon answers
// that the server needs a sign-in. Every scenario is logged; the ones in
// app/remoteauth/testdata/conformance-baseline.yml are expected to fail
// (the reason is there), any other failure fails the test.
func TestConformanceAuthThroughTheDaemon(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, suite := range testutil.ConformanceSuites(t, filepath.Join("..", "gateway", "testdata", "node"), filepath.Join("..", "remoteauth", "testdata")) {
		t.Run(suite.Version, func(t *testing.T) {
			start := time.Now()
			results := testutil.RunConformanceAuth(t, suite, self,
				[]string{conformanceClientEnv + "=1", conformanceBinaryEnv + "=" + binary}, 6*time.Minute)
			t.Logf("%d scenarios through the daemon in %s", len(results), time.Since(start).Round(time.Millisecond))
			logSignInCost(t, results)
		})
	}
}

// logSignInCost logs what each scenario's sign-in cost in requests, and
// checks the one whose cost is known exactly.
func logSignInCost(t *testing.T, results []testutil.ConformanceResult) {

	// What a sign-in costs against a fresh server: the requests the
	// scenario's servers saw other than the MCP requests themselves
	// (metadata, registration, authorization, token; the browser's
	// redirect to the daemon not counted). A scope step-up is two sign-ins.
	for _, r := range results {
		n, auth := signInRequests(r.Checks)
		t.Logf("%-45s sign-in requests: %d (%d to a separate authorization server)", r.Scenario, n, auth)
		// With a client metadata document: the resource's metadata, the
		// authorization server's, the authorization and the token
		// request; nothing registered, nothing tried twice.
		if r.Scenario == "auth/basic-cimd" && n != 4 {
			t.Errorf("%s: the sign-in took %d requests, want 4 (PRM, AS metadata, authorize, token)", r.Scenario, n)
		}
	}
}

// signInRequests counts, in a scenario's checks, the requests its servers
// got that were not MCP requests (to /mcp), and of them those its separate
// authorization server got (a 2025-03-26 server is its own).
func signInRequests(checks []testutil.ConformanceCheck) (n, auth int) {
	for _, c := range checks {
		var d struct{ Path string }
		json.Unmarshal(c.Details, &d)
		switch {
		case c.ID == "incoming-auth-request":
			n++
			auth++
		case c.ID == "incoming-request" && d.Path != "/mcp":
			n++
		}
	}
	return n, auth
}

// conformanceClientMain is the client the conformance suite runs for each
// auth scenario (MCP_CONFORMANCE_SCENARIO), with the scenario's MCP server
// URL as its argument; it exits 0 when the scenario's tool was called.
func conformanceClientMain(args []string) int {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if len(args) != 1 {
		logger.Error("usage: client SERVER_URL")
		return 2
	}
	bin := os.Getenv(conformanceBinaryEnv)
	if bin == "" {
		logger.Error(conformanceBinaryEnv + " is not set: it names the switchboard binary to run")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := runConformanceClient(ctx, bin, args[0], logger); err != nil {
		logger.Error("scenario failed", "scenario", os.Getenv("MCP_CONFORMANCE_SCENARIO"), "err", err)
		return 1
	}
	return 0
}

func runConformanceClient(ctx context.Context, bin, serverURL string, logger *slog.Logger) (err error) {
	dir, err := os.MkdirTemp("", "switchboard-conformance-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	home, userHome := filepath.Join(dir, "home"), filepath.Join(dir, "user")
	wroteSecret, err := writeConformanceConfig(ctx, home, serverURL)
	if err != nil {
		return err
	}
	env := append(testEnvWithHome(home, userHome), daemon.TestBrowserEnv+"=follow")

	// The daemon.
	var out testutil.SyncBuffer
	serve := exec.Command(bin, "serve", "--log-level", "debug")
	serve.Env, serve.Stdout, serve.Stderr = env, &out, &out
	if err := serve.Start(); err != nil {
		return fmt.Errorf("starting switchboard serve: %w", err)
	}
	exited := make(chan struct{})
	go func() { serve.Wait(); close(exited) }()
	defer func() {
		// Stopped as a user would (SIGTERM), killed if it does not stop.
		serve.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			serve.Process.Kill()
			<-exited
			err = errors.Join(err, errors.New("the daemon did not exit on SIGTERM"))
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "--- daemon output:\n%s--- end of daemon output\n", out.String())
		}
	}()
	info, err := waitServing(ctx, home, serve.Process.Pid, exited)
	if err != nil {
		return err
	}
	// The client secret went to the store's file: a daemon that found an
	// OS keychain would not see it (it logs its backend before it serves).
	if wroteSecret && !strings.Contains(out.String(), `msg="secret store opened" backend=`+secrets.BackendFile) {
		return errors.New("the daemon does not keep its secrets in the file the client secret was written to (an OS keychain?)")
	}
	store, err := tokens.Open(filepath.Join(home, daemon.TokensFile))
	if err != nil {
		return err
	}
	tok, err := store.Ensure("cli")
	if err != nil {
		return err
	}

	// The scenario through the daemon: connect, list, call, each signing
	// in when the daemon says the server needs it.
	c := &conformanceCaller{bin: bin, env: env, logger: logger}
	transport := &mcp.StreamableClientTransport{Endpoint: info.Address + "/mcp/" + conformanceServer,
		HTTPClient: &http.Client{Transport: bearerTransport(tok.Secret)}}
	client := mcp.NewClient(&mcp.Implementation{Name: "switchboard-conformance", Version: "1.0.0"}, nil)
	var session *mcp.ClientSession
	if err := c.withSignIn(ctx, "initialize", func() (err error) {
		session, err = client.Connect(ctx, transport, nil)
		return err
	}); err != nil {
		return err
	}
	defer session.Close()
	if err := c.withSignIn(ctx, "tools/list", func() error {
		_, err := session.ListTools(ctx, nil)
		return err
	}); err != nil {
		return err
	}
	return c.withSignIn(ctx, "tools/call", func() error {
		_, err := testutil.CallText(ctx, session, "test-tool", map[string]any{})
		return err
	})
}

// writeConformanceConfig writes home's config.json with the scenario's
// server as the remote server "conformance": with the client metadata URL
// the go-sdk's conformance client uses (the scenarios check its shape,
// never fetch it), and the pre-registered client of the scenario's context
// when it gives one, its secret in the secret store (the 0600 file: the
// daemon of a machine without a keychain reads the same).
// It reports whether it wrote a secret.
func writeConformanceConfig(ctx context.Context, home, serverURL string) (wroteSecret bool, err error) {
	oauth := map[string]any{"clientMetadataUrl": "https://conformance-test.local/client-metadata.json"}
	if v := os.Getenv("MCP_CONFORMANCE_CONTEXT"); v != "" {
		var cc struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
		}
		if err := json.Unmarshal([]byte(v), &cc); err != nil {
			return false, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
		if cc.ClientID != "" {
			oauth["clientId"] = cc.ClientID
		}
		if cc.ClientSecret != "" {
			store, err := secrets.Open(ctx, secrets.Options{Dir: home, NoKeychain: true})
			if err != nil {
				return false, err
			}
			if err := store.Set(conformanceServer, conformanceClientSecret, cc.ClientSecret); err != nil {
				return false, err
			}
			oauth["clientSecret"] = conformanceClientSecret
			wroteSecret = true
		}
	}
	cfg, err := json.MarshalIndent(map[string]any{"version": 1, "listen": "127.0.0.1:0", "servers": map[string]any{
		conformanceServer: map[string]any{"url": serverURL, "oauth": oauth},
	}}, "", "  ")
	if err != nil {
		return false, err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return false, err
	}
	return wroteSecret, os.WriteFile(filepath.Join(home, "config.json"), cfg, 0o600)
}

// waitServing waits until the daemon of pid wrote home's daemon.json.
func waitServing(ctx context.Context, home string, pid int, exited <-chan struct{}) (daemon.Info, error) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for {
		if info, err := daemon.ReadInfo(home); err == nil && info.PID == pid {
			return info, nil
		}
		select {
		case <-exited:
			return daemon.Info{}, errors.New("switchboard serve exited before it served")
		case <-deadline:
			return daemon.Info{}, errors.New("switchboard serve did not write daemon.json within 30s")
		case <-ctx.Done():
			return daemon.Info{}, ctx.Err()
		case <-tick.C:
		}
	}
}

// maxSignIns bounds the sign-ins of one scenario: a server that keeps
// asking for more scope after each is not signed in to forever (the
// scope-retry limit the spec asks of a client).
const maxSignIns = 3

// afterSignInWait bounds how long an operation is retried after a sign-in
// while it fails for another reason: the daemon restarts the server's
// connection once it is signed in.
const afterSignInWait = 20 * time.Second

type conformanceCaller struct {
	bin     string
	env     []string
	logger  *slog.Logger
	signIns int
}

// withSignIn runs op; while it fails because the server needs a sign-in,
// signs in with `switchboard auth login` and runs it again, at most
// maxSignIns sign-ins in all. After a sign-in, another failure is retried
// for afterSignInWait (the daemon is reconnecting).
func (c *conformanceCaller) withSignIn(ctx context.Context, what string, op func() error) error {
	var retryUntil time.Time
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := op()
		switch {
		case err == nil:
			return nil
		case strings.Contains(err.Error(), "needs sign-in"):
			if c.signIns == maxSignIns {
				return fmt.Errorf("%s: %w (after %d sign-ins)", what, err, c.signIns)
			}
			c.signIns++
			c.logger.Info("needs sign-in; signing in", "op", what, "err", err, "sign-in", c.signIns)
			if err := c.login(ctx); err != nil {
				return err
			}
			retryUntil = time.Now().Add(afterSignInWait)
			continue
		case time.Now().After(retryUntil):
			return fmt.Errorf("%s: %w", what, err)
		}
		c.logger.Debug("failed after a sign-in; trying again", "op", what, "err", err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (last error: %v)", what, ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// login runs `switchboard auth login conformance`, which starts the sign-in
// in the daemon (its test browser follows the redirects) and waits until it
// is signed in or failed.
func (c *conformanceCaller) login(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, "auth", "login", conformanceServer)
	cmd.Env = c.env
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("switchboard auth login %s: %w\n%s", conformanceServer, err, out.String())
	}
	c.logger.Info("switchboard auth login", "output", strings.TrimSpace(out.String()))
	return nil
}
