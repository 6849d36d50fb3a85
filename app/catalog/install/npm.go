package install

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/app/catalog"
	"github.com/switchboardhq/switchboard/app/config"
)

const (
	missingNPM  = "npm not found in PATH: install Node.js 18 or newer (https://nodejs.org), which includes npm"
	missingNode = "node not found in PATH: install Node.js 18 or newer (https://nodejs.org)"
)

// npmNameRE is npm's rule for a package name (lowercase, URL-safe, at most
// one scope).
var npmNameRE = regexp.MustCompile(`^(@[a-z0-9-~][a-z0-9-._~]*/)?[a-z0-9-~][a-z0-9-._~]*$`)

// npmSpec returns what to pass to npm install: name@version for a registry
// package, or the path of a local tarball or directory as given.
func npmSpec(pkg catalog.Package) (string, error) {
	id := pkg.Identifier
	if filepath.IsAbs(id) {
		// A local tarball (npm pack) or directory: the embedded catalog's
		// and the tests' way to install without the network.
		if _, err := os.Stat(id); err != nil {
			return "", fmt.Errorf("npm package %s: %w", id, err)
		}
		return id, nil
	}
	if len(id) > 214 || !npmNameRE.MatchString(id) {
		return "", fmt.Errorf("invalid npm package name %q", id)
	}
	if v := pkg.Version; v != "" {
		if strings.HasPrefix(v, "-") || strings.ContainsAny(v, " \t\n\x00") {
			return "", fmt.Errorf("invalid npm version %q", v)
		}
		return id + "@" + v, nil
	}
	return id, nil
}

// npm installs the package with npm into a staging directory of its own
// (nothing global, nothing shared with other servers) and configures the
// server to start as node <absolute bin>.
func (j *job) npm(ctx context.Context) (installed, error) {
	in, pkg := j.in, j.req.Package
	if in.opts.NPM == "" {
		return installed{}, errors.New(missingNPM)
	}
	if in.opts.Node == "" {
		return installed{}, errors.New(missingNode)
	}
	spec, err := npmSpec(pkg)
	if err != nil {
		return installed{}, err
	}
	if len(j.plan.RuntimeArgs) > 0 {
		// They are npx's (server.json's runtimeHint is "npx"); node is
		// started directly.
		j.rep.status(fmt.Sprintf("runtime arguments %q are for npx and are not used: Switchboard starts node directly", j.plan.RuntimeArgs))
	}
	stage, err := j.makeStage()
	if err != nil {
		return installed{}, err
	}
	// A package.json of our own makes the staging directory npm's project
	// root, so npm neither walks up to a parent project nor installs
	// globally.
	manifest := fmt.Sprintf(`{"name":"switchboard-server-%s","private":true}`+"\n", strings.ToLower(j.req.Server))
	if err := os.WriteFile(filepath.Join(stage, "package.json"), []byte(manifest), 0o644); err != nil {
		return installed{}, fmt.Errorf("preparing %s: %w", stage, err)
	}

	j.rep.begin(PhaseDownload, "npm install "+spec)
	argv := []string{in.opts.NPM, "install", "--prefix", stage,
		"--no-audit", "--no-fund", "--no-update-notifier", "--progress=false", "--loglevel=http", "--omit=dev"}
	if in.opts.IgnoreScripts {
		argv = append(argv, "--ignore-scripts")
	}
	if pkg.RegistryBaseURL != "" {
		if !strings.HasPrefix(pkg.RegistryBaseURL, "https://") && !strings.HasPrefix(pkg.RegistryBaseURL, "http://") {
			return installed{}, fmt.Errorf("invalid npm registry URL %q", pkg.RegistryBaseURL)
		}
		argv = append(argv, "--registry", pkg.RegistryBaseURL)
	}
	// "--" ends npm's options: the spec can only be a package.
	argv = append(argv, "--", spec)
	if err := run(ctx, j.rep, stage, in.env, argv); err != nil {
		return installed{}, err
	}

	j.rep.begin(PhaseInstall, "finding the server's entry point")
	name, err := installedDependency(stage)
	if err != nil {
		return installed{}, err
	}
	pkgDir := filepath.Join(stage, "node_modules", filepath.FromSlash(name))
	pj, err := readPackageJSON(pkgDir)
	if err != nil {
		return installed{}, err
	}
	bin, err := pickBin(name, pj.Bin)
	if err != nil {
		return installed{}, err
	}
	version := pj.Version
	if version == "" {
		version = "0.0.0"
	}
	final, err := j.promote(version)
	if err != nil {
		return installed{}, err
	}
	binPath := filepath.Join(final, "node_modules", filepath.FromSlash(name), filepath.FromSlash(bin))
	if _, err := os.Stat(binPath); err != nil {
		return installed{}, fmt.Errorf("the bin of %s: %w", name, err)
	}
	j.rep.status(fmt.Sprintf("installed %s@%s: node %s", name, version, binPath))
	cfg := config.Server{
		Command: in.opts.Node,
		Args:    append([]string{binPath}, j.plan.PackageArgs...),
		Env:     nilIfEmpty(j.plan.Env),
	}
	return installed{version: version, dir: final, cfg: cfg}, nil
}

type packageJSON struct {
	Name         string            `json:"name"`
	Version      string            `json:"version"`
	Bin          json.RawMessage   `json:"bin"`
	Dependencies map[string]string `json:"dependencies"`
}

func readPackageJSON(dir string) (*packageJSON, error) {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return nil, fmt.Errorf("reading the installed package.json: %w", err)
	}
	var pj packageJSON
	if err := json.Unmarshal(b, &pj); err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, "package.json"), err)
	}
	return &pj, nil
}

// installedDependency finds the one package npm installed into our
// project: for a tarball the name is only known from its package.json.
func installedDependency(stage string) (string, error) {
	pj, err := readPackageJSON(stage)
	if err != nil {
		return "", err
	}
	if len(pj.Dependencies) != 1 {
		return "", fmt.Errorf("expected npm to record one installed package, found %d", len(pj.Dependencies))
	}
	name := slices.Collect(maps.Keys(pj.Dependencies))[0]
	if !npmNameRE.MatchString(name) {
		return "", fmt.Errorf("npm installed a package with an invalid name %q", name)
	}
	return name, nil
}

// pickBin chooses the server's executable from package.json's "bin": a
// string is the one bin (named after the package); in a map, the entry named
// like the package wins, then "mcp-<name>" or "<name>-mcp"/"<name>-server"
// style names containing it, then a lone entry.
func pickBin(pkgName string, raw json.RawMessage) (string, error) {
	clean := func(p string) (string, error) {
		p = path.Clean(strings.TrimPrefix(p, "./"))
		if p == "." || path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
			return "", fmt.Errorf("package %s has a bin outside itself: %q", pkgName, p)
		}
		return p, nil
	}
	if len(raw) == 0 || string(raw) == "null" {
		return "", fmt.Errorf("package %s has no \"bin\" in its package.json, so there is no program to start", pkgName)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return clean(s)
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil || len(m) == 0 {
		return "", fmt.Errorf("package %s has an unreadable \"bin\" in its package.json", pkgName)
	}
	base := pkgName[strings.LastIndex(pkgName, "/")+1:]
	names := slices.Sorted(maps.Keys(m))
	if p, ok := m[base]; ok {
		return clean(p)
	}
	if p, ok := m["mcp-"+base]; ok {
		return clean(p)
	}
	var containing []string
	for _, n := range names {
		if strings.Contains(n, base) || strings.Contains(base, n) {
			containing = append(containing, n)
		}
	}
	if len(containing) == 1 {
		return clean(m[containing[0]])
	}
	if len(m) == 1 {
		return clean(m[names[0]])
	}
	return "", fmt.Errorf("package %s has several programs (%s) and none is named after it", pkgName, strings.Join(names, ", "))
}

func nilIfEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}
