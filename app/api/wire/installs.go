package wire

import "time"

// CatalogResult is the answer of GET /api/v1/catalog?q=&limit=: curated
// entries and the official registry's.
type CatalogResult struct {
	Entries []CatalogEntry `json:"entries"`
	// Source says what answered for the registry's part: "registry" (live),
	// "cache" (the registry's earlier answers) or "embedded" (neither
	// could; only the curated catalog is shown).
	Source string `json:"source"`
	// Warning, when the registry could not answer, says why and what is
	// shown instead, in words for the user.
	Warning string `json:"warning,omitempty"`
	// FetchedAt is when the registry entries shown were fetched; zero when
	// none are shown.
	FetchedAt time.Time `json:"fetchedAt,omitzero"`
	// More is true when there were more matches than the limit.
	More bool `json:"more,omitempty"`
}

// A CatalogEntry is one installable server (GET /api/v1/catalog/{name}):
// the official registry's server.json shape plus what Switchboard knows of
// where it came from.
type CatalogEntry struct {
	// Name is the registry name, reverse-DNS with one slash.
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description"`
	// Version is the exact version of this entry (never "latest").
	Version    string      `json:"version"`
	WebsiteURL string      `json:"websiteUrl,omitempty"`
	Repository *Repository `json:"repository,omitempty"`
	Packages   []Package   `json:"packages,omitempty"`
	// Remotes are hosted endpoints of the server: installing an entry
	// with only remotes (Kind "remote") configures the first one
	// Switchboard connects to, as does asking for it (InstallRequest.Remote)
	// when the entry has a package too (Kind "both").
	Remotes []Remote `json:"remotes,omitempty"`
	// Kind says how the entry installs: "local" (a package run here),
	// "remote" (only a hosted endpoint), "both", or "none" (nothing
	// Switchboard can install).
	Kind string `json:"kind"`

	// ShortName is the server name suggested for config.json.
	ShortName string `json:"shortName,omitempty"`
	// Source says where the entry came from: "embedded" or "registry".
	Source string `json:"source,omitempty"`
	// Status is the registry's status: "active", "deprecated" or "deleted".
	Status string `json:"status,omitempty"`
	// LatestVersion is the newest version the registry lists when it is
	// newer than Version.
	LatestVersion string `json:"latestVersion,omitempty"`
	// Network says the server needs the network: confined, it may still
	// use TCP. Only embedded entries say; registry ones run with network.
	Network bool `json:"network,omitempty"`
}

// A Remote is a hosted endpoint of a server: "streamable-http" or "sse",
// its URL (which may hold {variables}), the headers it takes and the URL's
// variables, each an input of the install.
type Remote struct {
	Type      string           `json:"type"`
	URL       string           `json:"url"`
	Headers   []KeyValue       `json:"headers,omitempty"`
	Variables map[string]Input `json:"variables,omitempty"`
}

// Repository is where a server's source lives.
type Repository struct {
	URL       string `json:"url"`
	Source    string `json:"source,omitempty"`
	Subfolder string `json:"subfolder,omitempty"`
}

// A Package is one way to run a server.
type Package struct {
	RegistryType    string `json:"registryType"`
	RegistryBaseURL string `json:"registryBaseUrl,omitempty"`
	// Identifier is the npm or PyPI package name, the OCI image reference,
	// the .mcpb download URL, or the program to run.
	Identifier       string     `json:"identifier"`
	Version          string     `json:"version,omitempty"`
	FileSHA256       string     `json:"fileSha256,omitempty"`
	RuntimeHint      string     `json:"runtimeHint,omitempty"`
	Transport        Transport  `json:"transport"`
	RuntimeArguments []Argument `json:"runtimeArguments,omitempty"`
	PackageArguments []Argument `json:"packageArguments,omitempty"`
	EnvironmentVars  []KeyValue `json:"environmentVariables,omitempty"`
}

// Transport is how a package speaks MCP.
type Transport struct {
	Type string `json:"type"`
	URL  string `json:"url,omitempty"`
}

// Input is what every user-supplied value has in server.json.
type Input struct {
	Description string `json:"description,omitempty"`
	IsRequired  bool   `json:"isRequired,omitempty"`
	// Format is "string" (the default), "number", "boolean", "filepath",
	// or Switchboard's "directory".
	Format      string   `json:"format,omitempty"`
	Value       string   `json:"value,omitempty"` // fixed value; not asked for
	IsSecret    bool     `json:"isSecret,omitempty"`
	Default     string   `json:"default,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Choices     []string `json:"choices,omitempty"`
	// DataPath names a file (or folder) in the server's data folder that
	// is the input's default.
	DataPath string `json:"dataPath,omitempty"`
}

// An Argument is a command-line argument: "positional" (ValueHint names
// it) or "named" (Name is the flag, such as "--port").
type Argument struct {
	Input
	Type       string `json:"type"`
	Name       string `json:"name,omitempty"`
	ValueHint  string `json:"valueHint,omitempty"`
	IsRepeated bool   `json:"isRepeated,omitempty"`
}

// A KeyValue is an environment variable the server reads, or a header a
// remote takes.
type KeyValue struct {
	Input
	Name string `json:"name"`
}

// InstallRequest is the body of POST /api/v1/installs.
type InstallRequest struct {
	// Entry is the catalog entry: a registry name or a curated short name.
	Entry string `json:"entry"`
	// Server is the name in config.json; empty means the entry's short name.
	Server string `json:"server,omitempty"`
	// Values are the user's inputs, by input name (a remote's: header
	// names and URL variables).
	Values map[string]string `json:"values,omitempty"`
	// Remote installs the entry's remote when it has a package too; an
	// entry with only remotes installs its remote without it.
	Remote bool `json:"remote,omitempty"`
}

// InstallView is an install, running or finished.
type InstallView struct {
	ID      string `json:"id"`
	Server  string `json:"server"`
	Entry   string `json:"entry"`
	Version string `json:"version"`
	// Update is true for an update of an installed server.
	Update bool `json:"update,omitempty"`
	// Remote is true for the install of a remote server: its phases are
	// resolve, configure and verify (the first connect).
	Remote  bool      `json:"remote,omitempty"`
	Started time.Time `json:"started"`
	// Phase is the current (or last) phase: resolve, download, install,
	// verify.
	Phase string `json:"phase"`
	// Output holds the last lines of progress.
	Output []string `json:"output"`
	Done   bool     `json:"done"`
	// Error says why the install failed (everything was rolled back).
	Error string `json:"error,omitempty"`
	// Tools are what the verified server listed.
	Tools []Tool `json:"tools,omitempty"`
	// Notice says what the user still has to do after a successful
	// install: a remote that asked for a sign-in (HTTP 401), or one that
	// did not connect yet.
	Notice string `json:"notice,omitempty"`
	// EventsSince is the id of the last event before this install's first
	// report: /api/v1/events?since=EventsSince&types=install shows every
	// report of it.
	EventsSince uint64 `json:"eventsSince"`
}

// InstallEvent is the data of a TypeInstall event: one progress report of
// an install.
type InstallEvent struct {
	ID      string `json:"id"`
	Server  string `json:"server"`
	Phase   string `json:"phase"`
	Line    string `json:"line,omitempty"`
	Output  bool   `json:"output,omitempty"`
	Percent int    `json:"percent"`
	Done    bool   `json:"done,omitempty"`
	Error   string `json:"error,omitempty"`
	Tools   []Tool `json:"tools,omitempty"`
	Notice  string `json:"notice,omitempty"`
}

// Tool is a tool an installed server listed when it was verified.
type Tool struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// UninstallRequest is the (optional) body of POST
// /api/v1/servers/{name}/uninstall.
type UninstallRequest struct {
	// Purge also deletes the server's data folder (servers/<name>/data:
	// a memory graph, a database). Without it the data stays, for a
	// reinstall to find.
	Purge bool `json:"purge,omitempty"`
}

// UninstallResult is the answer of POST /api/v1/servers/{name}/uninstall.
type UninstallResult struct {
	Server string `json:"server"`
	// Data is the data folder that was kept ("" when there was none).
	Data string `json:"data,omitempty"`
	// Purged: the data folder was deleted.
	Purged bool `json:"purged,omitempty"`
}

// UpdateCheck is the answer of GET /api/v1/servers/{name}/update.
type UpdateCheck struct {
	Server    string `json:"server"`
	Entry     string `json:"entry"`
	Installed string `json:"installed"`
	Latest    string `json:"latest"`
	Available bool   `json:"available"`
	Warning   string `json:"warning,omitempty"`
}

// PathCheckRequest is the body of POST /api/v1/paths/check: a path an
// install input of format Kind ("filepath", "file" or "directory"; empty
// is "filepath") is to be given.
type PathCheckRequest struct {
	Path string `json:"path"`
	Kind string `json:"kind,omitempty"`
}

// PathCheck is the answer of POST /api/v1/paths/check. Error is what the
// installer would refuse about the path for that kind ("" when it would
// take it), in words for the user.
type PathCheck struct {
	Exists bool   `json:"exists"`
	IsDir  bool   `json:"isDir"`
	Error  string `json:"error,omitempty"`
}
