package catalog

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ErrNotInstallable is wrapped by RunnablePackage's error when an entry has
// no package Switchboard can run.
var ErrNotInstallable = errors.New("not installable")

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
	var reasons []string
	for _, p := range e.Packages {
		err := p.Runnable()
		if err == nil {
			return p, nil
		}
		reasons = append(reasons, err.Error())
	}
	name := e.Name
	if name == "" {
		name = e.ShortName
	}
	switch {
	case len(reasons) > 0:
		return Package{}, fmt.Errorf("server %s is %w: %s", name, ErrNotInstallable, strings.Join(reasons, "; "))
	case len(e.Remotes) > 0:
		return Package{}, fmt.Errorf("server %s is %w as a local server: it is remote-only (%s at %s); installing it configures the remote",
			name, ErrNotInstallable, e.Remotes[0].Type, e.Remotes[0].URL)
	default:
		return Package{}, fmt.Errorf("server %s is %w: it lists no packages", name, ErrNotInstallable)
	}
}

// Runnable returns nil when Switchboard can run the package, else an error
// that says why not in words a user can act on.
func (p Package) Runnable() error {
	what := fmt.Sprintf("%s package %s", p.RegistryType, p.Identifier)
	switch p.RegistryType {
	case RegistryNPM, RegistryPyPI, RegistryOCI, RegistryMCPB, RegistryCommand:
	case "":
		return fmt.Errorf("package %s has no registryType", p.Identifier)
	default:
		return fmt.Errorf("package type %s is not supported (%s); Switchboard runs npm, pypi, oci and mcpb packages", p.RegistryType, p.Identifier)
	}
	// A missing transport is read as stdio: server.json requires the
	// field, but the only transport a package without one could use is
	// the one every MCP client supports.
	if t := p.Transport.Type; t != "" && t != "stdio" {
		return fmt.Errorf("%s uses transport %s; Switchboard runs stdio packages", what, t)
	}
	if strings.TrimSpace(p.Identifier) == "" {
		return fmt.Errorf("%s package has no identifier", p.RegistryType)
	}
	switch p.RegistryType {
	case RegistryNPM, RegistryPyPI:
		if p.ExactVersion() == "" {
			return fmt.Errorf("%s has no exact version (%q); Switchboard installs pinned versions only", what, p.Version)
		}
	case RegistryOCI:
		if p.ExactVersion() == "" {
			return fmt.Errorf("%s has no tag or digest; Switchboard runs pinned images only", what)
		}
	case RegistryMCPB:
		u, err := url.Parse(p.Identifier)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return fmt.Errorf("%s: the bundle address is not an https URL", what)
		}
		if b, err := hex.DecodeString(p.FileSHA256); err != nil || len(b) != 32 {
			return fmt.Errorf("%s has no valid fileSha256, so the download cannot be verified", what)
		}
	}
	return nil
}

// ExactVersion returns the exact version the package pins, or "" when it
// pins none: the version of an npm, PyPI or NuGet package, the tag or
// digest of an OCI image (in the identifier, as server.json puts it, or in
// Version as older entries do), the version or else the SHA-256 of an
// .mcpb bundle, and the version, if given, of a local command.
func (p Package) ExactVersion() string {
	switch p.RegistryType {
	case RegistryOCI:
		ref := p.Identifier
		if i := strings.LastIndex(ref, "@"); i >= 0 {
			return ref[i+1:] // a digest pins the image exactly
		}
		slash := strings.LastIndex(ref, "/")
		if i := strings.LastIndex(ref, ":"); i > slash {
			if tag := ref[i+1:]; tag != "latest" && tag != "" {
				return tag
			}
			return ""
		}
		if IsExactVersion(p.Version) {
			return p.Version
		}
		return ""
	case RegistryMCPB:
		if IsExactVersion(p.Version) {
			return p.Version
		}
		if p.FileSHA256 != "" {
			return "sha256:" + p.FileSHA256
		}
		return ""
	default:
		if IsExactVersion(p.Version) {
			return p.Version
		}
		return ""
	}
}
