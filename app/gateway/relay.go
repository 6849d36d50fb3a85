package gateway

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/supervisor"
)

// relayServer is the name of a Relay's one server.
const relayServer = "switchboard"

// A Relay is a gateway of one server whose backend is not a process but
// another MCP endpoint, served to one client by its Server: what the stdio
// bridge (app/bridge) serves its client with, relaying to the daemon's
// endpoint. Its methods are those of bridge.Front.
type Relay struct {
	g *Gateway
	b *backend
}

// NewRelay makes the gateway of one server whose sessions acquire gives;
// Start lists it. The upstream sessions are opened with Client, so that
// what the upstream says (progress, logging, list changes, sampling,
// elicitation, roots) comes back to Server's client.
func NewRelay(acquire func(context.Context) (Lease, error), logger *slog.Logger, version string) *Relay {
	return &Relay{g: New(Options{Backends: relayBackends(acquire), Logger: logger, Version: version})}
}

// Start adds the server and lists it in the background; Server, Tried and
// Listed are for after Start. (A list acquires a session at once: what
// acquire needs of the relay, Client, must be ready before.)
func (r *Relay) Start() {
	// The upstream applies its own timeouts; the relay only relays.
	r.g.Sync([]ServerConfig{{Name: relayServer, Timeout: 24 * time.Hour}})
	r.b, _ = r.g.backend(relayServer)
}

// Server serves the client.
func (r *Relay) Server() *mcp.Server { return r.b.front }

// Client is the client an upstream session is opened with, introducing
// itself as impl.
func (r *Relay) Client(impl *mcp.Implementation) *mcp.Client { return r.g.newClient(relayServer, impl) }

// Relist lists the upstream again (the tools may differ after a
// reconnect); it does not wait for the list.
func (r *Relay) Relist() { r.g.Relist(relayServer) }

// Tried is closed after the first list attempt, whatever its outcome.
func (r *Relay) Tried() <-chan struct{} { return r.b.tried }

// Listed reports whether the upstream's lists are known.
func (r *Relay) Listed() bool { return r.b.listed.Load() }

// Close stops the relay's background work.
func (r *Relay) Close() { r.g.Close() }

// relayBackends are a Relay's Backends: its one server's sessions, and no
// events (the upstream is no process of a pool).
type relayBackends func(context.Context) (Lease, error)

func (a relayBackends) Acquire(ctx context.Context, _ string) (Lease, error) { return a(ctx) }

func (relayBackends) Subscribe(int) (<-chan *supervisor.Event, func()) {
	ch := make(chan *supervisor.Event)
	var once sync.Once
	return ch, func() { once.Do(func() { close(ch) }) }
}
