package daemon

import (
	"log/slog"
	"maps"
	"slices"
	"sync"

	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/gateway"
)

// profileWarnings logs what a profile names that its endpoint silently
// leaves out: servers that are not installed or not enabled, and tools its
// server does not offer (a typo, a tool it dropped). A server's tools are
// judged once they are known, at a config change for the servers already
// listed and when the gateway lists one.
//
// A finding is logged when it is new: the first time it is seen, or once
// it changed (the profile's servers or tools edited, the server listing
// other tools, a server installed, removed, enabled or disabled). A config
// applied that changes none of that (a setting toggled, the same config
// saved again) logs nothing: every settings change applies the config, and
// the same warnings written again each time drowned the log. A finding
// that is fixed and then comes back is logged again.
type profileWarnings struct {
	log *slog.Logger
	// tools is the gateway's Tools: a server's last list, nil while it
	// is not listed.
	tools func(server string) []gateway.ToolInfo

	mu     sync.Mutex
	cfg    *config.Config              // the config applied last; nil before the first
	warned map[string]*profileFindings // by profile, its findings logged and still standing
}

// profileFindings are a profile's findings logged last, each sorted.
type profileFindings struct {
	servers []string            // servers not installed or not enabled
	tools   map[string][]string // by server, tools it does not offer
}

// applied judges cfg's profiles: the config in force may have changed.
func (p *profileWarnings) applied(cfg *config.Config) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cfg = cfg
	if p.warned == nil {
		p.warned = map[string]*profileFindings{}
	}
	for name := range p.warned {
		if _, ok := cfg.Profiles[name]; !ok {
			delete(p.warned, name) // a profile made again is new
		}
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Profiles)) {
		_, missing, _ := cfg.ProfileServers(name)
		f := p.findings(name)
		if len(missing) > 0 && !slices.Equal(slices.Sorted(slices.Values(missing)), f.servers) {
			p.log.Warn("a profile names servers that are not installed or not enabled; its endpoint leaves them out",
				"profile", name, "servers", missing)
		}
		f.servers = slices.Sorted(slices.Values(missing))
	}
	p.check("")
}

// listed judges the profiles that limit server's tools: the gateway has
// just listed it. It is the gateway's Options.Listed hook.
func (p *profileWarnings) listed(server string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.check(server)
}

// findings are profile name's findings logged last. p.mu is held.
func (p *profileWarnings) findings(name string) *profileFindings {
	f := p.warned[name]
	if f == nil {
		f = &profileFindings{tools: map[string][]string{}}
		p.warned[name] = f
	}
	return f
}

// check logs what is missing of server's tools ("" for every server's)
// that is new since last logged, and forgets what no longer stands. p.mu
// is held.
func (p *profileWarnings) check(server string) {
	if p.cfg == nil {
		return
	}
	installed := func(s string) bool {
		sc, ok := p.cfg.Servers[s]
		return ok && sc.IsEnabled()
	}
	judged := map[string]bool{} // servers whose tools are known now
	offered := func(s string) ([]string, bool) {
		if server != "" && s != server || !installed(s) {
			return nil, false
		}
		list := p.tools(s)
		if list == nil {
			return nil, false
		}
		judged[s] = true
		names := make([]string, len(list))
		for i, t := range list {
			names[i] = t.Name
		}
		return names, true
	}
	for _, name := range slices.Sorted(maps.Keys(p.cfg.Profiles)) {
		missing := p.cfg.MissingTools(name, offered)
		f := p.findings(name)
		// A server whose tools are not known keeps its last finding (a
		// restart is no news); one the profile no longer limits, or that
		// is not installed and enabled, is judged afresh once back.
		for s := range f.tools {
			_, limited := p.cfg.Profiles[name].Tools[s]
			if !limited || !installed(s) || judged[s] && missing[s] == nil {
				delete(f.tools, s)
			}
		}
		for _, s := range slices.Sorted(maps.Keys(missing)) {
			sorted := slices.Sorted(slices.Values(missing[s]))
			if slices.Equal(sorted, f.tools[s]) {
				continue
			}
			f.tools[s] = sorted
			p.log.Warn("a profile names tools its server does not offer; its endpoint leaves them out",
				"profile", name, "server", s, "tools", missing[s])
		}
	}
}
