package install

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/app/catalog"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/secrets"
)

// mcpbManifest is the part of an MCP bundle's manifest.json the installer
// reads (manifest_version 0.1 to 0.3; older bundles say dxt_version).
type mcpbManifest struct {
	ManifestVersion string `json:"manifest_version"`
	DXTVersion      string `json:"dxt_version"`
	Name            string `json:"name"`
	Version         string `json:"version"`
	Server          struct {
		Type       string `json:"type"`
		EntryPoint string `json:"entry_point"`
		MCPConfig  struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcp_config"`
	} `json:"server"`
	UserConfig map[string]mcpbUserConfig `json:"user_config"`
}

type mcpbUserConfig struct {
	Type        string          `json:"type"` // string, number, boolean, directory, file
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Required    bool            `json:"required"`
	Sensitive   bool            `json:"sensitive"`
	Multiple    bool            `json:"multiple"`
	Default     json.RawMessage `json:"default"`
}

// mcpb downloads the bundle, checks its SHA-256 before anything else reads
// it, unpacks it into the staging directory and configures the server per
// its manifest.
func (j *job) mcpb(ctx context.Context) (installed, error) {
	in, pkg := j.in, j.req.Package
	u, err := url.Parse(pkg.Identifier)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return installed{}, fmt.Errorf("invalid bundle URL %q: it must be http or https", pkg.Identifier)
	}
	want := strings.ToLower(strings.TrimSpace(pkg.FileSHA256))
	if len(want) != 64 {
		return installed{}, errors.New("the bundle has no valid fileSha256: Switchboard does not run a bundle it cannot verify")
	}
	stage, err := j.makeStage()
	if err != nil {
		return installed{}, err
	}
	j.rep.begin(PhaseDownload, "downloading "+u.Redacted())
	bundle := filepath.Join(stage, ".bundle.mcpb")
	got, err := j.download(ctx, u.String(), bundle)
	if err != nil {
		return installed{}, err
	}
	if got != want {
		return installed{}, fmt.Errorf("the bundle's SHA-256 is %s, but the catalog says %s: refusing to use it", got, want)
	}
	j.rep.status("SHA-256 verified: " + got)

	j.rep.begin(PhaseInstall, "unpacking the bundle")
	if err := unzip(bundle, stage, 8*in.opts.MaxDownload); err != nil {
		return installed{}, err
	}
	if err := os.Remove(bundle); err != nil {
		return installed{}, err
	}
	b, err := os.ReadFile(filepath.Join(stage, "manifest.json"))
	if err != nil {
		return installed{}, fmt.Errorf("the bundle has no manifest.json: %w", err)
	}
	var m mcpbManifest
	if err := json.Unmarshal(b, &m); err != nil {
		return installed{}, fmt.Errorf("reading the bundle's manifest.json: %w", err)
	}
	// The manifest's user_config is more input: check it before running
	// anything.
	uc, err := j.userConfig(m)
	if err != nil {
		return installed{}, err
	}
	version := m.Version
	if version == "" {
		version = pkg.Version
	}
	if version == "" {
		version = want[:12]
	}
	final, err := j.promote(version)
	if err != nil {
		return installed{}, err
	}
	cfg, err := j.mcpbConfig(m, final, uc)
	if err != nil {
		return installed{}, err
	}
	return installed{version: version, dir: final, cfg: cfg}, nil
}

// download saves url to dst, at most MaxDownload bytes, and returns the hex
// SHA-256 of what it saved.
func (j *job) download(ctx context.Context, rawURL, dst string) (string, error) {
	max := j.in.opts.MaxDownload
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return "", fmt.Errorf("downloading the bundle: %w", err)
	}
	resp, err := j.in.opts.HTTPClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("downloading the bundle: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("downloading the bundle: %s", resp.Status)
	}
	if resp.ContentLength > max {
		return "", fmt.Errorf("the bundle is %d bytes, more than the limit of %d", resp.ContentLength, max)
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", fmt.Errorf("saving the bundle: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	pr := &progressReader{r: io.LimitReader(resp.Body, max+1), total: resp.ContentLength, rep: j.rep}
	n, err := io.Copy(io.MultiWriter(f, h), pr)
	if err != nil {
		return "", fmt.Errorf("downloading the bundle: %w", err)
	}
	if n > max {
		return "", fmt.Errorf("the bundle is larger than the limit of %d bytes", max)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("saving the bundle: %w", err)
	}
	j.rep.status(fmt.Sprintf("downloaded %d bytes", n))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// progressReader reports every tenth of a download of known size.
type progressReader struct {
	r     io.Reader
	total int64
	n     int64
	step  int64
	rep   *reporter
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	if p.total > 0 {
		if s := p.n * 10 / p.total; s > p.step && s < 10 {
			p.step = s
			p.rep.status(fmt.Sprintf("downloaded %d%% of %d bytes", s*10, p.total))
		}
	}
	return n, err
}

// unzip extracts zip file src into dir. Entries that would land outside dir
// (absolute, "..", a Windows drive or device name) and symbolic links are
// refused, as is more than limit bytes in total.
func unzip(src, dir string, limit int64) error {
	zr, err := zip.OpenReader(src)
	if err != nil {
		return fmt.Errorf("opening the bundle: %w", err)
	}
	defer zr.Close()
	var total int64
	for _, f := range zr.File {
		name := strings.ReplaceAll(f.Name, `\`, "/")
		if !filepath.IsLocal(filepath.FromSlash(strings.TrimSuffix(name, "/"))) || strings.HasPrefix(name, "/") {
			return fmt.Errorf("the bundle holds %q, a path outside its directory: refusing it", f.Name)
		}
		if f.Mode()&os.ModeSymlink != 0 || f.Mode()&os.ModeType&^os.ModeDir != 0 {
			return fmt.Errorf("the bundle holds %q, which is not a plain file: refusing it", f.Name)
		}
		target := filepath.Join(dir, filepath.FromSlash(name))
		if f.FileInfo().IsDir() || strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(target, 0o755); err != nil {
				return fmt.Errorf("unpacking %s: %w", f.Name, err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return fmt.Errorf("unpacking %s: %w", f.Name, err)
		}
		n, err := extract(f, target, limit-total)
		if err != nil {
			return err
		}
		total += n
	}
	return nil
}

func extract(f *zip.File, target string, left int64) (int64, error) {
	rc, err := f.Open()
	if err != nil {
		return 0, fmt.Errorf("unpacking %s: %w", f.Name, err)
	}
	defer rc.Close()
	mode := os.FileMode(0o644)
	if f.Mode()&0o111 != 0 {
		mode = 0o755
	}
	out, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return 0, fmt.Errorf("unpacking %s: %w", f.Name, err)
	}
	defer out.Close()
	n, err := io.Copy(out, io.LimitReader(rc, left+1))
	if err != nil {
		return n, fmt.Errorf("unpacking %s: %w", f.Name, err)
	}
	if n > left {
		return n, errors.New("the bundle unpacks to more than the size limit: refusing it")
	}
	return n, out.Close()
}

// userValue is one user_config value, decided and checked.
type userValue struct {
	values []string // one per value; several when multiple
	secret bool
	set    bool
}

// userConfig checks the user's values against the manifest's user_config.
func (j *job) userConfig(m mcpbManifest) (map[string]userValue, error) {
	known := inputNames(j.req.Package)
	out := map[string]userValue{}
	for _, key := range slices.Sorted(maps.Keys(m.UserConfig)) {
		c := m.UserConfig[key]
		known = append(known, key)
		in := catalog.Input{Description: c.Description, IsRequired: c.Required, IsSecret: c.Sensitive, Default: rawDefault(c.Default)}
		switch c.Type {
		case "", "string":
		case "number", "boolean", "directory":
			in.Format = c.Type
		case "file":
			in.Format = "file"
		default:
			return nil, inputErr(key, "unknown user_config type %q", c.Type)
		}
		given, has := j.plan.lookup(j.req.Values, key)
		raw := []string{given}
		if c.Multiple && has {
			raw = strings.Split(given, "\n")
		}
		uv := userValue{secret: c.Sensitive}
		for _, g := range raw {
			v, ok, err := resolveValue(key, in, g, has && g != "", "")
			if err != nil {
				return nil, err
			}
			if ok {
				uv.values = append(uv.values, v)
				uv.set = true
			}
		}
		if uv.secret {
			for _, v := range uv.values {
				j.rep.addSecret(v)
			}
		}
		out[key] = uv
	}
	if err := j.plan.checkUnused(j.req.Values, known); err != nil {
		return nil, err
	}
	return out, nil
}

func rawDefault(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []any
	if json.Unmarshal(raw, &list) == nil {
		parts := make([]string, len(list))
		for i, v := range list {
			parts[i] = fmt.Sprint(v)
		}
		return strings.Join(parts, "\n")
	}
	return strings.TrimSpace(string(raw))
}

var templateRE = regexp.MustCompile(`\$\{([^}]*)\}`)

// mcpbConfig turns the manifest's mcp_config into a config.Server:
// ${__dirname} is the version directory, ${user_config.KEY} the user's value
// (a sensitive one stays in the secret store: a placeholder in arguments, a
// secret variable in the environment), ${HOME} the home directory and
// ${pathSeparator} (or ${/}) the path separator.
func (j *job) mcpbConfig(m mcpbManifest, dir string, uc map[string]userValue) (config.Server, error) {
	mc := m.Server.MCPConfig
	command, args := mc.Command, mc.Args
	if command == "" {
		// Manifests may leave mcp_config out and rely on type + entry point.
		entry := "${__dirname}/" + m.Server.EntryPoint
		switch m.Server.Type {
		case "node":
			command, args = "node", []string{entry}
		case "python":
			command, args = "python3", []string{entry}
		case "binary":
			command = entry
		default:
			return config.Server{}, fmt.Errorf("the bundle's manifest has no mcp_config.command and server type %q", m.Server.Type)
		}
	}
	home, _ := os.UserHomeDir()
	var expandErr error
	expand := func(s string, inEnv string) string {
		return templateRE.ReplaceAllStringFunc(s, func(t string) string {
			name := t[2 : len(t)-1]
			switch {
			case name == "__dirname":
				return dir
			case name == "HOME":
				return home
			case name == "pathSeparator" || name == "/":
				return string(filepath.Separator)
			case strings.HasPrefix(name, "user_config."):
				key := strings.TrimPrefix(name, "user_config.")
				v, ok := uc[key]
				if !ok {
					expandErr = fmt.Errorf("the bundle's manifest refers to ${%s}, which its user_config does not define", name)
					return ""
				}
				val := strings.Join(v.values, ",")
				if v.secret && v.set {
					if inEnv != "" {
						return val // env: the whole variable becomes a secret below
					}
					skey := "user_config." + key
					j.plan.SecretArgs[skey] = val
					return secrets.Placeholder(skey)
				}
				return val
			}
			return t
		})
	}
	command = expand(command, "")
	var outArgs []string
	for _, a := range args {
		// "${user_config.X}" alone with multiple: true gives one argument
		// per value.
		if mm := templateRE.FindStringSubmatch(a); mm != nil && mm[0] == a && strings.HasPrefix(mm[1], "user_config.") {
			if v, ok := uc[strings.TrimPrefix(mm[1], "user_config.")]; ok {
				if !v.set {
					continue // an unset optional value drops its argument
				}
				if len(v.values) > 1 && !v.secret {
					outArgs = append(outArgs, v.values...)
					continue
				}
			}
		}
		outArgs = append(outArgs, expand(a, ""))
	}
	env := maps.Clone(j.plan.Env)
	if env == nil {
		env = map[string]string{}
	}
	for _, k := range slices.Sorted(maps.Keys(mc.Env)) {
		tmpl := mc.Env[k]
		v := expand(tmpl, k)
		secret := false
		for _, mm := range templateRE.FindAllStringSubmatch(tmpl, -1) {
			if u, ok := uc[strings.TrimPrefix(mm[1], "user_config.")]; ok && strings.HasPrefix(mm[1], "user_config.") && u.secret && u.set {
				secret = true
			}
		}
		switch {
		case secret:
			j.plan.SecretEnv[k] = v
			j.rep.addSecret(v)
		case v != "":
			env[k] = v
		}
	}
	if expandErr != nil {
		return config.Server{}, expandErr
	}
	switch command {
	case "node":
		if j.in.opts.Node == "" {
			return config.Server{}, errors.New(missingNode)
		}
		command = j.in.opts.Node
	case "python", "python3":
		if j.in.opts.Python == "" {
			return config.Server{}, errors.New("python3 not found in PATH: install Python 3.10 or newer (https://www.python.org/downloads/)")
		}
		command = j.in.opts.Python
	case "uv", "uvx":
		p := lookPath(command, j.in.opts.PATH)
		if p == "" {
			return config.Server{}, errors.New(missingUVX)
		}
		command = p
	default:
		if strings.HasPrefix(command, dir) {
			if fi, err := os.Stat(command); err != nil || fi.IsDir() {
				return config.Server{}, fmt.Errorf("the bundle's program %s is missing", command)
			}
		} else if !filepath.IsAbs(command) && lookPath(command, j.in.opts.PATH) == "" {
			return config.Server{}, fmt.Errorf("the bundle runs %q, which is not found in PATH", command)
		}
	}
	args = append(outArgs, j.plan.PackageArgs...)
	return config.Server{Command: command, Args: args, Env: nilIfEmpty(env), Cwd: dir}, nil
}
