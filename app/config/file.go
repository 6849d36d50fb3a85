package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/switchboardhq/switchboard/app/atomicfile"
)

// defaultMode is the permission of a config file this package creates: it
// may hold secrets in server env entries.
const defaultMode fs.FileMode = 0o600

// Load reads the config file at path.
//
// A missing file gives Default() and a nil error, and nothing is written.
// Otherwise the content goes through Parse (so errors are *Error values
// with positions). A file with an older version is migrated: first its
// original bytes are written to "<path>.v<oldVersion>" (config.json.v0,
// replacing an older archive of the same version), then the migrated
// configuration is saved to path; if either write fails, Load fails and the
// file is left as it was. A file with a newer version is refused (the error
// matches ErrNewerVersion) and left alone.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("loading config: %w", err)
	}
	cfg, _, _, err := adopt(path, data)
	return cfg, err
}

// adopt parses data read from path and, when it had an older version,
// archives it and saves the migrated file. It returns the config, the bytes
// now in the file, and the version data had.
func adopt(path string, data []byte) (cfg *Config, onDisk []byte, fromVersion int, err error) {
	cfg, fromVersion, err = parse(path, data)
	if err != nil {
		return nil, nil, 0, err
	}
	if fromVersion == CurrentVersion {
		return cfg, data, fromVersion, nil
	}
	mode := defaultMode
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	archive := archivePath(path, fromVersion)
	if err := atomicfile.Write(archive, data, mode); err != nil {
		return nil, nil, 0, fmt.Errorf("archiving %s before migrating it from version %d: %w", path, fromVersion, err)
	}
	out, err := cfg.encode()
	if err != nil {
		return nil, nil, 0, fmt.Errorf("encoding migrated %s: %w", path, err)
	}
	if err := atomicfile.Write(path, out, defaultMode); err != nil {
		return nil, nil, 0, fmt.Errorf("saving %s migrated from version %d (the original is in %s): %w", path, fromVersion, archive, err)
	}
	return cfg, out, fromVersion, nil
}

func archivePath(path string, version int) string {
	return fmt.Sprintf("%s.v%d", path, version)
}

// Save validates c and writes it to path atomically: the content goes to a
// temporary file in the same directory, is synced, and is renamed over
// path, and then the directory is synced where the system allows it. A
// reader sees the old file or the new one, never a mix. A new file gets
// mode 0600; an existing file keeps its mode. When path is a symbolic link,
// the file it points to is replaced and the link kept. The directory must
// exist.
//
// The content is indented JSON with a trailing newline, the same bytes for
// the same Config (see the package doc for the key order). An invalid c is
// not written; the error is an *Error with File set to path.
func (c *Config) Save(path string) error {
	if e := c.validate(); e != nil {
		e.File = path
		return e
	}
	data, err := c.encode()
	if err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	if err := atomicfile.Write(path, data, defaultMode); err != nil {
		return fmt.Errorf("saving config: %w", err)
	}
	return nil
}
