package daemon

import (
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/gateway"
)

// profileTools warns of the tools a profile limits a server to that the
// server does not offer (a typo, a tool it dropped): the profile's
// endpoint silently leaves them out. A server is judged once its tools are
// known, at a config change for the servers already listed and when the
// gateway lists one; each finding is logged once per config applied.
type profileTools struct {
	log *slog.Logger
	// tools is the gateway's Tools: a server's last list, nil while it
	// is not listed.
	tools func(server string) []gateway.ToolInfo

	mu     sync.Mutex
	cfg    *config.Config  // the config applied last; nil before the first
	warned map[string]bool // findings logged for cfg (see key)
}

// applied judges cfg's profiles afresh: the config in force changed.
func (p *profileTools) applied(cfg *config.Config) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cfg, p.warned = cfg, map[string]bool{}
	p.check("")
}

// listed judges the profiles that limit server's tools: the gateway has
// just listed it. It is the gateway's Options.Listed hook.
func (p *profileTools) listed(server string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.check(server)
}

// check logs what is missing of server's tools ("" for every server's)
// and was not logged for this config yet. p.mu is held.
func (p *profileTools) check(server string) {
	if p.cfg == nil {
		return
	}
	offered := func(s string) ([]string, bool) {
		if server != "" && s != server {
			return nil, false
		}
		list := p.tools(s)
		if list == nil {
			return nil, false
		}
		names := make([]string, len(list))
		for i, t := range list {
			names[i] = t.Name
		}
		return names, true
	}
	for _, name := range slices.Sorted(maps.Keys(p.cfg.Profiles)) {
		missing := p.cfg.MissingTools(name, offered)
		for _, s := range slices.Sorted(maps.Keys(missing)) {
			key := name + "\x00" + s + "\x00" + strings.Join(missing[s], "\x00")
			if p.warned[key] {
				continue
			}
			p.warned[key] = true
			p.log.Warn("a profile names tools its server does not offer; its endpoint leaves them out",
				"profile", name, "server", s, "tools", missing[s])
		}
	}
}
