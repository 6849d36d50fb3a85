package install

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/app/config"
)

const (
	missingUVX    = "uvx not found in PATH: install uv (https://docs.astral.sh/uv/getting-started/installation/), which provides uvx"
	missingDocker = "neither docker nor podman found in PATH: install Docker (https://docs.docker.com/get-docker/) or Podman (https://podman.io)"
)

// pypiNameRE is PEP 508's rule for a distribution name.
var pypiNameRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)

// pypiArgs builds uvx's arguments: runtime arguments (uvx's own), then
// --from <id>==<version> <id>, then the package's.
func pypiArgs(id, version, indexURL string, p *plan) ([]string, error) {
	if !pypiNameRE.MatchString(id) {
		return nil, fmt.Errorf("invalid PyPI package name %q", id)
	}
	from := id
	if version != "" {
		if strings.HasPrefix(version, "-") || strings.ContainsAny(version, " \t\n\x00=<>!~;") {
			return nil, fmt.Errorf("invalid PyPI version %q", version)
		}
		from = id + "==" + version
	}
	args := slices.Clone(p.RuntimeArgs)
	if indexURL != "" {
		if !strings.HasPrefix(indexURL, "https://") && !strings.HasPrefix(indexURL, "http://") {
			return nil, fmt.Errorf("invalid package index URL %q", indexURL)
		}
		args = append(args, "--index-url", indexURL)
	}
	args = append(args, "--from", from, id)
	return append(args, p.PackageArgs...), nil
}

// pypi runs the package through uvx. uv keeps the environment in its cache,
// so the first start (verify) downloads it and later starts reuse it.
func (j *job) pypi(context.Context) (installed, error) {
	in, pkg := j.in, j.req.Package
	if in.opts.UVX == "" {
		return installed{}, errors.New(missingUVX)
	}
	version := pkg.Version
	args, err := pypiArgs(pkg.Identifier, version, pkg.RegistryBaseURL, j.plan)
	if err != nil {
		return installed{}, err
	}
	j.rep.begin(PhaseDownload, "uvx fetches "+pkg.Identifier+" into uv's cache when the server first starts (now, at verify)")
	return installed{version: version, cfg: config.Server{Command: in.opts.UVX, Args: args, Env: nilIfEmpty(j.plan.Env)}}, nil
}

// imageRef adds the package version as the tag of an image that has
// neither tag nor digest.
func imageRef(id, version string) (string, error) {
	if id == "" || strings.HasPrefix(id, "-") || strings.ContainsAny(id, " \t\n\x00") {
		return "", fmt.Errorf("invalid image reference %q", id)
	}
	last := id[strings.LastIndex(id, "/")+1:]
	if version != "" && !strings.Contains(last, ":") && !strings.Contains(id, "@") {
		return id + ":" + version, nil
	}
	return id, nil
}

// ociArgs builds `run -i --rm [runtime args] [-e VAR ...] <image> [args]`.
// Environment values are not on the command line: -e VAR passes the
// variable from docker's own environment, which the daemon sets from the
// config and the secret store.
func ociArgs(image string, p *plan) []string {
	args := []string{"run", "-i", "--rm"}
	args = append(args, p.RuntimeArgs...)
	names := slices.Sorted(maps.Keys(p.Env))
	names = append(names, slices.Sorted(maps.Keys(p.SecretEnv))...)
	for _, n := range names {
		args = append(args, "-e", n)
	}
	args = append(args, image)
	return append(args, p.PackageArgs...)
}

// oci pulls the image (the download, with docker's output streamed) and
// runs it with docker, or podman where docker is missing.
func (j *job) oci(ctx context.Context) (installed, error) {
	in, pkg := j.in, j.req.Package
	engine := in.opts.Docker
	if engine == "" || pkg.RuntimeHint == "podman" && in.opts.Podman != "" {
		engine = in.opts.Podman
	}
	if engine == "" {
		return installed{}, errors.New(missingDocker)
	}
	image, err := imageRef(pkg.Identifier, pkg.Version)
	if err != nil {
		return installed{}, err
	}
	j.rep.begin(PhaseDownload, filepath.Base(engine)+" pull "+image)
	if err := run(ctx, j.rep, "", in.env, []string{engine, "pull", image}); err != nil {
		return installed{}, err
	}
	version := pkg.Version
	if i := strings.LastIndex(image, ":"); version == "" && i > strings.LastIndex(image, "/") {
		version = image[i+1:]
	}
	return installed{version: version, cfg: config.Server{Command: engine, Args: ociArgs(image, j.plan), Env: nilIfEmpty(j.plan.Env)}}, nil
}

// command runs a local program as given; it must exist.
func (j *job) command(context.Context) (installed, error) {
	in, pkg := j.in, j.req.Package
	prog := pkg.Identifier
	switch {
	case prog == "" || strings.HasPrefix(prog, "-") || strings.ContainsRune(prog, 0):
		return installed{}, fmt.Errorf("invalid command %q", prog)
	case strings.ContainsAny(prog, `/\`):
		if _, err := os.Stat(prog); err != nil {
			return installed{}, fmt.Errorf("command %s: %w", prog, err)
		}
	case lookPath(prog, in.opts.PATH) == "":
		return installed{}, fmt.Errorf("command %q not found in PATH", prog)
	}
	args := slices.Concat(j.plan.RuntimeArgs, j.plan.PackageArgs)
	return installed{version: pkg.Version, cfg: config.Server{Command: prog, Args: args, Env: nilIfEmpty(j.plan.Env)}}, nil
}
