package daemon

import (
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/app/catalog"
	"github.com/switchboardhq/switchboard/app/catalog/install"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/confine"
)

// SandboxDir is the folder under the data directory with each confined
// server's own temp directory (<home>/sandbox/<server>/tmp).
const SandboxDir = "sandbox"

// sandboxer derives each confined server's policy (see withConfinement).
type sandboxer struct {
	// home is Switchboard's data directory; userHome the user's.
	home, userHome string
	// networked names the embedded catalog entries that need the network.
	networked map[string]bool
	// listenPort is the daemon's own port, which no server may connect to.
	listenPort uint16
}

func newSandboxer(home string, listen net.Addr, log *slog.Logger) sandboxer {
	sb := sandboxer{home: home, networked: map[string]bool{}}
	if a, ok := listen.(*net.TCPAddr); ok {
		sb.listenPort = uint16(a.Port)
	}
	sb.userHome, _ = os.UserHomeDir()
	entries, err := catalog.Embedded()
	if err != nil {
		log.Warn("reading the embedded catalog for network needs; catalog servers get network", "err", err)
	}
	for _, e := range entries {
		sb.networked[e.Name] = e.Network
	}
	return sb
}

// withConfinement gives each server that runs confined (see
// config.Server.IsConfined) its policy and a temp directory of its own
// (TMPDIR). A temp directory that cannot be made is logged; the server then
// has none it may write.
func (sb sandboxer) withConfinement(log *slog.Logger, specs []supervisor.Spec, cfg *config.Config) []supervisor.Spec {
	for i, sp := range specs {
		sc := cfg.Servers[sp.Name]
		if sp.Remote != nil || !sc.IsConfined(cfg.SandboxDefault) {
			continue // a remote server runs nothing here to confine
		}
		tmp := filepath.Join(sb.home, SandboxDir, sp.Name, "tmp")
		if err := os.MkdirAll(tmp, 0o700); err != nil {
			log.Warn("cannot make a confined server's temp directory", "server", sp.Name, "err", err)
		}
		env := maps.Clone(sp.Env)
		if env == nil {
			env = map[string]string{}
		}
		env["TMPDIR"] = tmp
		specs[i].Env = env
		specs[i].Confine = sb.policy(sp, sc, tmp)
	}
	return specs
}

// policy is what server sp may touch: the system, its install folder (data
// included), its own temp directory, what it was granted (absolute paths in
// its arguments and environment, its roots and working directory, the
// config's sandbox paths), the package runtime's cache when it runs one
// (npx, uvx), and nothing else under the user's home or Switchboard's.
// The supervisor adds the folder of the program it resolves.
func (sb sandboxer) policy(sp supervisor.Spec, sc config.Server, tmp string) *confine.Policy {
	serverDir := filepath.Join(sb.home, "servers", sp.Name)
	p := &confine.Policy{
		Read:  append(confine.SystemRead(), serverDir),
		Write: []string{filepath.Join(serverDir, install.DataFolder), tmp},
	}
	// Granted paths are writable: the catalog does not mark which inputs
	// are read-only, and filesystem and sqlite write to theirs. A program
	// or script given as an argument (node /x/index.js) is only read.
	for _, g := range sb.granted(sp, sc) {
		if isProgram(g) {
			p.Read = append(p.Read, g)
		} else {
			p.Write = append(p.Write, g)
		}
	}
	if sc.Cwd != "" {
		p.Read = append(p.Read, sc.Cwd)
	}
	p.Write = append(p.Write, sb.runtimeCaches(sp.Command)...)
	if s := sc.Sandbox; s != nil {
		p.Read = append(p.Read, s.Read...)
		p.Write = append(p.Write, s.Write...)
	}
	p.Network = sb.needsNetwork(sc)
	if p.Network && sb.listenPort != 0 {
		// Without network every port is refused already.
		p.DenyPorts = []uint16{sb.listenPort}
	}
	slices.Sort(p.Read)
	slices.Sort(p.Write)
	p.Read, p.Write = slices.Compact(p.Read), slices.Compact(p.Write)
	return p
}

// granted are the existing absolute paths the user gave the server in its
// arguments (filesystem's directories, sqlite's database), its environment
// (memory's MEMORY_FILE_PATH) and its roots. Switchboard's own data
// directory is never granted this way (tokens, secrets, other servers).
func (sb sandboxer) granted(sp supervisor.Spec, sc config.Server) []string {
	var cands []string
	cands = append(cands, sp.Args...)
	for _, v := range sp.Env {
		cands = append(cands, v)
	}
	for _, r := range sc.Roots {
		cands = append(cands, strings.TrimPrefix(r, "file://"))
	}
	var out []string
	for _, c := range cands {
		if _, v, ok := strings.Cut(c, "="); ok && strings.HasPrefix(c, "--") {
			c = v // --db-path=/x
		}
		if !filepath.IsAbs(c) || within(c, sb.home) {
			continue
		}
		if _, err := os.Stat(c); err == nil {
			out = append(out, filepath.Clean(c))
		}
	}
	return out
}

// isProgram reports whether path is a file to run rather than data: an
// executable, or a script by its extension.
func isProgram(path string) bool {
	fi, err := os.Stat(path)
	if err != nil || fi.IsDir() {
		return false
	}
	switch filepath.Ext(path) {
	case ".js", ".mjs", ".cjs", ".ts", ".py", ".sh":
		return true
	}
	return fi.Mode()&0o111 != 0
}

// runtimeCaches are the package runtime's folders a server started through
// it writes (downloads, locks).
func (sb sandboxer) runtimeCaches(command string) []string {
	if sb.userHome == "" {
		return nil
	}
	switch strings.TrimSuffix(filepath.Base(command), ".exe") {
	case "npx", "npm":
		return []string{filepath.Join(sb.userHome, ".npm")}
	case "uvx", "uv":
		return []string{filepath.Join(sb.userHome, ".cache", "uv"), filepath.Join(sb.userHome, ".local", "share", "uv")}
	}
	return nil
}

// needsNetwork: the config's sandbox.network wins; else an embedded
// catalog entry says; a registry entry (unknown needs) gets it; a server
// added by hand does not.
func (sb sandboxer) needsNetwork(sc config.Server) bool {
	switch {
	case sc.Sandbox != nil && sc.Sandbox.Network != nil:
		return *sc.Sandbox.Network
	case sc.Install == nil:
		return false
	}
	need, known := sb.networked[sc.Install.Entry]
	return need || !known
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
