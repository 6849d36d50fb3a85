package catalog

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/app/installable"
)

// How an entry can be installed (Entry.Kind).
const (
	KindLocal  = installable.KindLocal  // a package Switchboard runs here
	KindRemote = installable.KindRemote // only a hosted endpoint
	KindBoth   = installable.KindBoth   // a package and a hosted endpoint: the package unless the remote is asked for
	KindNone   = installable.KindNone   // nothing Switchboard can install
)

// Remote types (Remote.Type), as server.json names them.
const (
	RemoteStreamableHTTP = installable.RemoteStreamableHTTP
	RemoteSSE            = installable.RemoteSSE
)

// Kind says how the entry can be installed: KindLocal, KindRemote, KindBoth
// or KindNone (installable.Kind).
func (e Entry) Kind() string { return installable.Kind(e.rulePackages(), e.ruleRemotes()) }

// InstallableRemote returns the first remote Switchboard can connect to
// (the publisher's preference), or why there is none.
func (e Entry) InstallableRemote() (Remote, error) {
	i, err := installable.InstallableRemote(e.Name, e.ruleRemotes())
	if err != nil {
		return Remote{}, err
	}
	return e.Remotes[i], nil
}

// Supported returns nil when Switchboard can connect to the remote: a
// streamable-http or sse endpoint with an http(s) URL (installable.Supported).
func (r Remote) Supported() error { return installable.Supported(r.rule()) }

// RemoteSetup is what a remote becomes in config.json: its URL with the
// variables filled in, its transport, its plain headers, and the values of
// its secret headers (which go to the secret store, never to config.json).
type RemoteSetup struct {
	URL           string
	Transport     string
	Headers       map[string]string
	SecretHeaders map[string]string
}

// variableRE finds the {name} placeholders of a URL or header template.
var variableRE = regexp.MustCompile(`\{([A-Za-z0-9_.-]+)\}`)

// Setup fills the remote in with the user's values, keyed by URL variable
// name or header name. A required input without a value, a value for no
// input, or a placeholder left without a value is an error naming the
// input; nothing is written by Setup, so the caller can refuse the install
// before it starts.
func (r Remote) Setup(values map[string]string) (RemoteSetup, error) {
	if err := r.Supported(); err != nil {
		return RemoteSetup{}, err
	}
	known := map[string]bool{}
	vars := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(r.Variables)) {
		in := r.Variables[name]
		known[name] = true
		v, err := inputValue(name, "the URL variable", in, values[name])
		if err != nil {
			return RemoteSetup{}, err
		}
		vars[name] = v
	}
	fill := func(what, template string) (string, error) {
		var missing []string
		out := variableRE.ReplaceAllStringFunc(template, func(m string) string {
			name := m[1 : len(m)-1]
			v, ok := vars[name]
			if !ok || v == "" {
				missing = append(missing, name)
			}
			return v
		})
		if len(missing) > 0 {
			return "", fmt.Errorf("input %s: required, but no value was given (%s uses it)", missing[0], what)
		}
		return out, nil
	}
	u, err := fill("the remote's URL "+r.URL, r.URL)
	if err != nil {
		return RemoteSetup{}, err
	}
	out := RemoteSetup{URL: u, Transport: r.Type}
	for _, h := range r.Headers {
		if h.Name == "" {
			return RemoteSetup{}, fmt.Errorf("remote %s has a header without a name", r.URL)
		}
		known[h.Name] = true
		v := values[h.Name]
		if h.Value != "" && v == "" {
			if v, err = fill("header "+h.Name, h.Value); err != nil {
				return RemoteSetup{}, err
			}
		}
		if v, err = inputValue(h.Name, "the header", h.Input, v); err != nil {
			return RemoteSetup{}, err
		}
		if v == "" {
			continue // optional and not given
		}
		target := &out.Headers
		if h.IsSecret {
			target = &out.SecretHeaders
		}
		if *target == nil {
			*target = map[string]string{}
		}
		(*target)[h.Name] = v
	}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		if !known[name] {
			return RemoteSetup{}, fmt.Errorf("input %s is not one this remote takes (it takes %s)", name, takes(known))
		}
	}
	return out, nil
}

// inputValue is the value of one input: the user's, else its default; a
// required input with neither is an error naming it, and a value outside
// the input's choices is refused.
func inputValue(name, what string, in Input, given string) (string, error) {
	v := given
	if v == "" {
		v = in.Default
	}
	if v == "" && in.IsRequired {
		if in.Description != "" {
			what += ": " + in.Description
		}
		return "", fmt.Errorf("input %s: required, but no value was given (%s)", name, what)
	}
	if v != "" && len(in.Choices) > 0 && !slices.Contains(in.Choices, v) {
		if in.IsSecret {
			return "", fmt.Errorf("input %s: the value is not one of %s", name, strings.Join(in.Choices, ", "))
		}
		return "", fmt.Errorf("input %s: %q is not one of %s", name, v, strings.Join(in.Choices, ", "))
	}
	return v, nil
}

func takes(known map[string]bool) string {
	if len(known) == 0 {
		return "no inputs"
	}
	return strings.Join(slices.Sorted(maps.Keys(known)), ", ")
}
