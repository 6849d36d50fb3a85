package daemon

import (
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/history"
	"github.com/switchboardhq/switchboard/app/record"
)

// Lifecycle events the daemon records itself, beside the supervisor's
// (starting, ready, crashed, ...): the history keeps a server's whole story.
const (
	// EventConfig: a server was added to, removed from, enabled, disabled
	// or changed in config.json, by hand or through the API.
	EventConfig record.EventKind = "config"
	// EventInstall: an install, update or uninstall ended.
	EventInstall record.EventKind = api.JournalInstall
	// EventClientConfig: a client's config file was written (Server "").
	EventClientConfig record.EventKind = api.JournalClientConfig
)

// journal returns the API's Journal: what the API did goes to the history
// as lifecycle events.
func journal(hist *history.Store) func(api.JournalEntry) {
	return func(e api.JournalEntry) {
		hist.Observe(record.Event{Time: time.Now(), Server: e.Server, Kind: record.EventKind(e.Kind), Message: e.Message})
	}
}

// relaunchedServers names the servers of next, enabled in both, whose
// program changed since prev: command, arguments, environment, working
// directory, secrets or installed version; for a remote server, its URL,
// transport, headers or OAuth client.
func relaunchedServers(prev, next map[string]config.Server) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(next)) {
		before, ok := prev[name]
		after := next[name]
		if !ok || !before.IsEnabled() || !after.IsEnabled() {
			continue
		}
		if before.Command != after.Command || !slices.Equal(before.Args, after.Args) || !maps.Equal(before.Env, after.Env) ||
			before.Cwd != after.Cwd || !slices.Equal(before.SecretEnv, after.SecretEnv) || !reflect.DeepEqual(before.Install, after.Install) ||
			before.URL != after.URL || before.Transport != after.Transport || !maps.Equal(before.Headers, after.Headers) ||
			!maps.Equal(before.SecretHeaders, after.SecretHeaders) || !reflect.DeepEqual(before.OAuth, after.OAuth) {
			out = append(out, name)
		}
	}
	return out
}

// A configChange is what happened to one server between two configs.
type configChange struct {
	server, message string
}

// configChanges lists, by server name, how the servers of next differ from
// those of prev.
func configChanges(prev, next map[string]config.Server) []configChange {
	var out []configChange
	for _, name := range slices.Sorted(maps.Keys(prev)) {
		if _, ok := next[name]; !ok {
			out = append(out, configChange{name, "removed from the config"})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(next)) {
		before, existed := prev[name]
		after := next[name]
		switch {
		case !existed:
			out = append(out, configChange{name, "added to the config"})
		case before.IsEnabled() != after.IsEnabled():
			msg := "disabled in the config"
			if after.IsEnabled() {
				msg = "enabled in the config"
			}
			out = append(out, configChange{name, msg})
		case !reflect.DeepEqual(before, after):
			out = append(out, configChange{name, "changed in the config"})
		}
	}
	return out
}
