package gateway

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/supervisor"
)

// listTimeout bounds listing a server's features, start-up included.
const listTimeout = 3 * time.Minute

// features are what a server offers, as it listed them.
type features struct {
	tools        []*mcp.Tool
	prompts      []*mcp.Prompt
	resources    []*mcp.Resource
	templates    []*mcp.ResourceTemplate
	instructions string
}

// A backend is one enabled server as the gateway sees it: its settings, its
// own endpoint, and what it offers.
type backend struct {
	g     *Gateway
	front *mcp.Server

	mu       sync.Mutex
	cfg      ServerConfig
	features features
	// registered holds what front has, by kind and name, as JSON, so that a
	// relist re-registers only what changed (each change notifies clients;
	// see diffRegistered).
	registered map[string][]byte
	// views are the endpoint's fronts for name budgets below MaxNameLen
	// (ownnames.go), by budget, under mu. installMu orders installs.
	views     map[int]*serverView
	installMu sync.Mutex

	listed atomic.Bool // features are known: listed, or kept from an earlier run
	// served is set once the features are on the fronts (its endpoint's
	// and the aggregates'), after listed: until then a call of one of its
	// tools goes to the server as unlisted (unlistedTool), not "unknown".
	served atomic.Bool
	// fresh is set once a process of this daemon run listed the server,
	// and cleared again when a list fails; while it is unset a ready
	// process is asked for its lists (see run).
	fresh atomic.Bool
	kept  []byte // the kept-lists file as last read or written (under mu)
	// tried is closed after the first list attempt, whatever its outcome;
	// requests wait for it (see awaitLists) so a client's first tools/list
	// is complete.
	tried     chan struct{}
	triedOnce sync.Once
	kickCh    chan struct{} // asks run to relist
	readyCh   chan struct{} // asks run to list the server if still unlisted (kickUnlisted)
	done      chan struct{} // closed when the server leaves the gateway
	once      sync.Once
	// announcer is the process that last said its lists changed (under
	// mu): the next relist asks it, since another process of the pool may
	// not have the change.
	announcer *mcp.ClientSession
	// held are the tools the reviewer holds from clients, with the error
	// a call of each gets; reviewed is set once it has seen the tools
	// (both under mu; see holds.go). reviewMu orders reviews.
	held     map[string]string
	reviewed bool
	reviewMu sync.Mutex
	// heldPrompts and heldTemplates are the prompts (by name) and
	// resource templates (by URI template) held likewise, when the
	// reviewer is an ItemReviewer (under mu).
	heldPrompts, heldTemplates map[string]string
}

func (g *Gateway) newBackend(c ServerConfig) *backend {
	b := &backend{g: g, cfg: c, front: g.newFront(c.Name, MaxNameLen, false), registered: map[string][]byte{},
		views: map[int]*serverView{},
		tried: make(chan struct{}), kickCh: make(chan struct{}, 1), readyCh: make(chan struct{}, 1),
		done: make(chan struct{})}
	if f, data, ok := g.loadKept(c.Name); ok {
		// Known from an earlier run: served from the kept lists, and
		// listed again when a process next starts.
		b.features, b.kept = f, data
		b.listed.Store(true)
		b.served.Store(true)
		b.triedOnce.Do(func() { close(b.tried) })
	}
	return b
}

func (b *backend) config() ServerConfig {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cfg
}

// kickFrom asks for a relist from the process of cs, which announced a
// change of its lists.
func (b *backend) kickFrom(cs *mcp.ClientSession) {
	b.mu.Lock()
	b.announcer = cs
	b.mu.Unlock()
	b.kick()
}

// kick asks for a relist; kicks while one is pending merge into it.
func (b *backend) kick() {
	select {
	case b.kickCh <- struct{}{}:
	default:
	}
}

// kickUnlisted says a process of the server became ready: it asks for a
// list made only if, when its turn comes, no process of this run has
// listed the server since its last failed list (its lists may be kept from
// an earlier run). Usually the list in progress started that process and
// lists it. (A needless list is not free: in session mode it leases a
// process of its own, started for it and stopped after.) The check is
// run's, not the caller's: a list running when the process became ready
// may still fail, and the ready event is then its retry.
func (b *backend) kickUnlisted() {
	select {
	case b.readyCh <- struct{}{}:
	default:
	}
}

func (b *backend) close() { b.once.Do(func() { close(b.done) }) }

// run relists the server whenever kicked, one list at a time.
func (b *backend) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.done:
			return
		case <-b.kickCh:
			b.list(ctx)
		case <-b.readyCh:
			if !b.fresh.Load() {
				b.list(ctx)
			}
		}
	}
}

// list relists the server, logging a failure. A failed list is made
// again when a process of the server is next ready: also for a server
// listed before in this run (a relist after it announced a change, or
// after Relist), whose lists would otherwise stay stale.
func (b *backend) list(ctx context.Context) {
	if err := b.relist(ctx); err != nil {
		b.fresh.Store(false)
		b.g.log.Warn("cannot list the server's tools; retrying when it is ready",
			"server", b.config().Name, "err", err)
	} else if listed := b.g.opts.Listed; listed != nil {
		listed(b.config().Name)
	}
	b.triedOnce.Do(func() { close(b.tried) })
}

// failed reports whether err, from listing method, fails the listing. A
// server that advertises a capability but answers "method not found" to
// one of its lists (resources without resources/templates/list is
// common: templates came later, and a server's own handlers are often
// only the ones it uses) has nothing of that kind: its other lists,
// its tools above all, are served all the same.
func (b *backend) failed(method string, err error) bool {
	if err == nil {
		return false
	}
	if rpcErr, ok := errors.AsType[*jsonrpc.Error](err); ok && rpcErr.Code == jsonrpc.CodeMethodNotFound {
		b.g.log.Info("the server does not serve a list its capabilities announce; taken as empty",
			"server", b.config().Name, "method", method)
		return false
	}
	return true
}

// relist fetches every page of every list and registers the result.
func (b *backend) relist(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	name := b.config().Name
	var f features
	list := func(ctx context.Context, cs *mcp.ClientSession) error {
		init := cs.InitializeResult()
		f.instructions = init.Instructions
		caps := init.Capabilities
		if caps == nil {
			caps = &mcp.ServerCapabilities{}
		}
		var err error
		if caps.Tools != nil {
			if f.tools, err = collect(cs.Tools(ctx, nil)); b.failed("tools/list", err) {
				return fmt.Errorf("tools/list: %w", err)
			}
		}
		if caps.Prompts != nil {
			if f.prompts, err = collect(cs.Prompts(ctx, nil)); b.failed("prompts/list", err) {
				return fmt.Errorf("prompts/list: %w", err)
			}
		}
		if caps.Resources != nil {
			if f.resources, err = collect(cs.Resources(ctx, nil)); b.failed("resources/list", err) {
				return fmt.Errorf("resources/list: %w", err)
			}
			if f.templates, err = collect(cs.ResourceTemplates(ctx, nil)); b.failed("resources/templates/list", err) {
				return fmt.Errorf("resources/templates/list: %w", err)
			}
		}
		return nil
	}
	b.mu.Lock()
	announcer := b.announcer
	b.announcer = nil
	b.mu.Unlock()
	if announcer == nil || list(ctx, announcer) != nil {
		// None announced a change, or it has gone: any process of the pool.
		f = features{}
		lease, err := b.g.opts.Backends.Acquire(supervisor.Housekeeping(ctx), name)
		if err != nil {
			return err
		}
		err = lease.Do(ctx, list)
		// Given back before the lists are published: a client that sees
		// them finds the process no longer leased (in session mode the
		// lease is a process of its own, stopped on release).
		lease.Release()
		if err != nil {
			return err
		}
	}
	select {
	case <-b.done: // it left the gateway meanwhile: keep nothing
		return nil
	default:
	}
	// Reviewed before it is published: no front may show a held tool.
	last := b.publish(f)
	b.listed.Store(true)
	b.fresh.Store(true)
	kept := b.g.saveKept(name, f, last)
	b.mu.Lock()
	b.kept = kept
	b.mu.Unlock()
	b.install()
	b.g.rebuildAggregates()
	b.served.Store(true)
	b.g.log.Info("server listed", "server", name, "tools", len(f.tools), "prompts", len(f.prompts),
		"resources", len(f.resources), "templates", len(f.templates))
	return nil
}

func collect[T any](seq func(func(T, error) bool)) ([]T, error) {
	var out []T
	for v, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// visible returns the server's features minus its disabled tools and the
// tools held until approved (holds.go).
func (b *backend) visible() (ServerConfig, features) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f := b.features
	if len(b.cfg.DisabledTools) > 0 || b.g.opts.Reviewer != nil {
		f.tools = slices.DeleteFunc(slices.Clone(f.tools), func(t *mcp.Tool) bool {
			return slices.Contains(b.cfg.DisabledTools, t.Name) || !b.shown(t.Name)
		})
	}
	if b.g.opts.Reviewer != nil {
		f.prompts = slices.DeleteFunc(slices.Clone(f.prompts), func(p *mcp.Prompt) bool { return !b.shownItem(b.heldPrompts, p.Name) })
		f.templates = slices.DeleteFunc(slices.Clone(f.templates), func(t *mcp.ResourceTemplate) bool {
			return !b.shownItem(b.heldTemplates, t.URITemplate)
		})
	}
	return b.cfg, f
}

// install registers the server's features on its own endpoint,
// unprefixed: under their own names on front, within each view's budget
// on the views' fronts (ownnames.go).
func (b *backend) install() {
	b.installMu.Lock()
	defer b.installMu.Unlock()
	cfg, f := b.visible()
	want := b.registrations(cfg, f, nil)
	b.mu.Lock()
	d := diffRegistered(b.registered, want)
	b.registered = d.registered
	views := slices.Collect(maps.Values(b.views))
	b.mu.Unlock()
	d.apply(b.front)
	for _, v := range views {
		b.installView(v, cfg, f)
	}
}

// registrations are what b's own endpoint offers of f: its tools under
// names (by their own; nil for their own names), recorded under their
// own; its prompts, resources and templates as they are.
func (b *backend) registrations(cfg ServerConfig, f features, names map[string]string) []registration {
	var want []registration
	for _, t := range f.tools {
		name := t.Name
		if names != nil {
			name = names[t.Name]
		}
		value := struct {
			*mcp.Tool
			capped
		}{t, capped{Tier: toolTier(cfg, t), Epoch: b.g.capEpoch.Load()}}
		want = append(want, registration{"tool:" + name, value, func(s *mcp.Server) { addTool(b.g, s, t, name, t.Name, cfg.Name) }})
	}
	for _, p := range f.prompts {
		want = append(want, registration{"prompt:" + p.Name, p, func(s *mcp.Server) { s.AddPrompt(p, b.g.promptHandler(cfg.Name, p.Name)) }})
	}
	for _, r := range f.resources {
		want = append(want, registration{"resource:" + r.URI, r, func(s *mcp.Server) { s.AddResource(r, b.g.resourceHandler(cfg.Name)) }})
	}
	for _, t := range f.templates {
		want = append(want, registration{"template:" + t.URITemplate, t, func(s *mcp.Server) { s.AddResourceTemplate(t, b.g.resourceHandler(cfg.Name)) }})
	}
	return want
}
