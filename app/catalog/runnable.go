package catalog

import (
	"github.com/switchboardhq/switchboard/app/installable"
)

// The rules of what Switchboard can install, and at which version, are
// app/installable's, shared with the CLI; these methods apply them to the
// catalog's entries.

// ErrNotInstallable is wrapped by RunnablePackage's error when an entry has
// no package Switchboard can run.
var ErrNotInstallable = installable.ErrNotInstallable

// RunnablePackages returns the entry's packages that Switchboard can run,
// in the entry's order (the publisher's preference): stdio packages of
// type npm, pypi, oci, mcpb or command that carry what running them needs.
// The installer takes the first whose runtime (node, uv, docker or podman)
// is present.
func (e Entry) RunnablePackages() []Package {
	var out []Package
	for _, p := range e.Packages {
		if p.Runnable() == nil {
			out = append(out, p)
		}
	}
	return out
}

// RunnablePackage returns the first package Switchboard can run. When there
// is none, the error (wrapping ErrNotInstallable) says why for each package,
// or that the server is remote-only.
func (e Entry) RunnablePackage() (Package, error) {
	name := e.Name
	if name == "" {
		name = e.ShortName
	}
	i, err := installable.RunnablePackage(name, e.rulePackages(), e.ruleRemotes())
	if err != nil {
		return Package{}, err
	}
	return e.Packages[i], nil
}

// Runnable returns nil when Switchboard can run the package, else an error
// that says why not in words a user can act on (installable.Runnable).
func (p Package) Runnable() error { return installable.Runnable(p.rule()) }

// ExactVersion returns the exact version the package pins, or "" when it
// pins none (installable.ExactVersion).
func (p Package) ExactVersion() string { return installable.ExactVersion(p.rule()) }

// CompareVersions returns -1, 0 or 1 as a is older than, the same as, or
// newer than b; ok is false when either is not a version it understands
// (installable.CompareVersions).
func CompareVersions(a, b string) (c int, ok bool) { return installable.CompareVersions(a, b) }

// Newer reports whether candidate is a newer version than installed
// (installable.Newer).
func Newer(installed, candidate string) bool { return installable.Newer(installed, candidate) }

// IsExactVersion reports whether v names one exact version, as server.json
// requires (installable.IsExactVersion).
func IsExactVersion(v string) bool { return installable.IsExactVersion(v) }

// rule is what the rules read of p.
func (p Package) rule() installable.Package {
	return installable.Package{RegistryType: p.RegistryType, Identifier: p.Identifier, Version: p.Version,
		FileSHA256: p.FileSHA256, Transport: p.Transport.Type}
}

func (r Remote) rule() installable.Remote { return installable.Remote{Type: r.Type, URL: r.URL} }

func (e Entry) rulePackages() []installable.Package {
	out := make([]installable.Package, len(e.Packages))
	for i, p := range e.Packages {
		out[i] = p.rule()
	}
	return out
}

func (e Entry) ruleRemotes() []installable.Remote {
	out := make([]installable.Remote, len(e.Remotes))
	for i, r := range e.Remotes {
		out[i] = r.rule()
	}
	return out
}
