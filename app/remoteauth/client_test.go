package remoteauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/remoteauth"
	"github.com/switchboardhq/switchboard/app/secrets"
)

// conformanceClientMain is the client the conformance suite runs for each
// auth scenario (MCP_CONFORMANCE_SCENARIO), with the scenario's MCP server
// URL as its argument: what the daemon will do for a remote server, in one
// process. It keeps the sign-in in a secret store (the 0600 file) of a
// temporary directory, serves the redirect on its own loopback listener,
// and connects with the go-sdk's streamable client whose OAuthHandler is
// the server's SignIn. A request that fails because the server needs a
// sign-in is retried after a Login, at most three times (the scope-retry
// limit the spec asks for). The browser is FollowRedirects: the scenarios'
// authorization servers redirect straight back.
func conformanceClientMain(args []string) int {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if len(args) != 1 {
		logger.Error("usage: client SERVER_URL")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := runConformanceClient(ctx, args[0], logger); err != nil {
		logger.Error("scenario failed", "scenario", os.Getenv("MCP_CONFORMANCE_SCENARIO"), "err", err)
		return 1
	}
	return 0
}

func runConformanceClient(ctx context.Context, serverURL string, logger *slog.Logger) error {
	dir, err := os.MkdirTemp("", "remoteauth-client-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	store, err := secrets.Open(ctx, secrets.Options{Dir: dir, NoKeychain: true, Logger: logger})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	m, err := remoteauth.New(remoteauth.Options{
		Secrets:     store,
		RedirectURL: "http://" + ln.Addr().String() + remoteauth.CallbackPath,
		Browser:     remoteauth.FollowRedirects{},
		Timeout:     20 * time.Second,
		// The URL the go-sdk's conformance client uses: the scenarios
		// check its shape, never fetch it.
		ClientIDMetadataURL: "https://conformance-test.local/client-metadata.json",
		Logger:              logger,
	})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(remoteauth.CallbackPath, m.Callback())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()

	var reg remoteauth.Registration
	var cc struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if v := os.Getenv("MCP_CONFORMANCE_CONTEXT"); v != "" {
		if err := json.Unmarshal([]byte(v), &cc); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
		reg = remoteauth.Registration{ClientID: cc.ClientID, ClientSecret: cc.ClientSecret}
	}
	si, err := m.Server("conformance", serverURL, reg)
	if err != nil {
		return err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "switchboard-conformance", Version: "1.0.0"}, nil)
	transport := &mcp.StreamableClientTransport{Endpoint: serverURL, OAuthHandler: si}

	var session *mcp.ClientSession
	if err := withSignIn(ctx, si, logger, func() (err error) {
		session, err = client.Connect(ctx, transport, nil)
		return err
	}); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer session.Close()
	if err := withSignIn(ctx, si, logger, func() error {
		_, err := session.ListTools(ctx, nil)
		return err
	}); err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	if err := withSignIn(ctx, si, logger, func() error {
		_, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "test-tool", Arguments: map[string]any{}})
		return err
	}); err != nil {
		return fmt.Errorf("tools/call: %w", err)
	}
	return nil
}

// withSignIn runs op; while it fails because the server needs a sign-in,
// signs in and runs it again, at most three sign-ins.
func withSignIn(ctx context.Context, si *remoteauth.SignIn, logger *slog.Logger, op func() error) error {
	for attempt := 0; ; attempt++ {
		err := op()
		if err == nil || !errors.Is(err, remoteauth.ErrNeedsSignIn) || attempt == 3 {
			return err
		}
		logger.Info("needs sign-in; signing in", "err", err, "attempt", attempt+1)
		if err := si.Login(ctx); err != nil {
			return err
		}
	}
}
