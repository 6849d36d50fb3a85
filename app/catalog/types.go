// Package catalog is where Switchboard finds servers to install: an embedded,
// curated catalog and the official MCP registry (cached on disk, the embedded
// catalog as the offline fallback). Its subpackage install turns an entry
// into a verified, running server.
//
// Entries use the official registry's server.json shape (schema
// 2025-12-11), so an embedded entry and a registry entry are the same thing
// to the installer and to the UI.
package catalog

import "github.com/switchboardhq/switchboard/app/installable"

// An Entry is one installable server: a server.json document plus what
// Switchboard knows about where it came from.
type Entry struct {
	// Name is the registry name, reverse-DNS with one slash
	// ("io.github.modelcontextprotocol/server-filesystem").
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description"`
	// Version is the exact version of this entry (never "latest").
	Version    string      `json:"version"`
	WebsiteURL string      `json:"websiteUrl,omitempty"`
	Repository *Repository `json:"repository,omitempty"`
	Packages   []Package   `json:"packages,omitempty"`
	// Remotes are hosted endpoints of the server. Installing an entry with
	// only remotes configures its first remote (see Entry.Kind).
	Remotes []Remote `json:"remotes,omitempty"`

	// The fields below are Switchboard's, not server.json's.

	// ShortName is the server name suggested for config.json ("filesystem"):
	// it becomes the tool prefix on the aggregated endpoint.
	ShortName string `json:"shortName,omitempty"`
	// Source says where the entry came from: "embedded" or "registry".
	Source string `json:"source,omitempty"`
	// Status is the registry's status: "active", "deprecated" or "deleted".
	// Embedded entries are active.
	Status string `json:"status,omitempty"`
	// LatestVersion is the newest version the registry lists for this
	// server when it is newer than Version: an embedded entry keeps its
	// curated, tested Version and shows the newer one here.
	LatestVersion string `json:"latestVersion,omitempty"`
	// Network says the server needs the network (it calls a web API or
	// fetches pages), so its confinement allows TCP. Embedded entries
	// say it; registry entries do not, and run with network.
	Network bool `json:"network,omitempty"`
}

// A Remote is a hosted endpoint of a server (server.json remotes[]): its
// transport ("streamable-http" or "sse"), its URL, which may hold
// {variables} the user fills in, and the headers it takes (an API key is
// a secret header).
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

// Registry types a Package may have. Switchboard runs npm, pypi, oci and
// mcpb packages (and local commands, which only the embedded catalog and the
// user give); nuget and cargo are listed but not installable.
const (
	RegistryNPM     = installable.RegistryNPM
	RegistryPyPI    = installable.RegistryPyPI
	RegistryOCI     = installable.RegistryOCI
	RegistryMCPB    = installable.RegistryMCPB
	RegistryNuGet   = installable.RegistryNuGet
	RegistryCommand = installable.RegistryCommand // Switchboard's own: a local program, as given
)

// A Package is one way to run a server (server.json packages[]).
type Package struct {
	RegistryType    string `json:"registryType"`
	RegistryBaseURL string `json:"registryBaseUrl,omitempty"`
	// Identifier is the npm or PyPI package name, the OCI image reference,
	// the .mcpb download URL, or (RegistryCommand) the program to run.
	Identifier string `json:"identifier"`
	Version    string `json:"version,omitempty"`
	// FileSHA256 is the hex SHA-256 of an .mcpb file; it must match
	// before the file is used.
	FileSHA256       string     `json:"fileSha256,omitempty"`
	RuntimeHint      string     `json:"runtimeHint,omitempty"`
	Transport        Transport  `json:"transport"`
	RuntimeArguments []Argument `json:"runtimeArguments,omitempty"`
	PackageArguments []Argument `json:"packageArguments,omitempty"`
	EnvironmentVars  []KeyValue `json:"environmentVariables,omitempty"`
}

// Transport is how a package speaks MCP; Switchboard runs "stdio" packages.
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
	// DataPath is Switchboard's: the name of a file (or folder) in the
	// server's data folder, servers/<name>/data, that is the input's
	// default. An input for a file the server keeps its data in (memory's
	// graph, sqlite's database) declares it, so that the data outlives
	// updates and uninstalls instead of living in the package's folder.
	DataPath string `json:"dataPath,omitempty"`
}

// An Argument is a command-line argument: "positional" (ValueHint names
// it) or "named" (Name is the flag, such as "--port").
//
// A named argument whose Format is "boolean" is a flag without a value
// (server.json has no other way to say so): it is given, alone, when its
// value is "true" and left out otherwise. Every other named argument is
// given as two arguments, the flag and its value.
type Argument struct {
	Input
	Type       string `json:"type"`
	Name       string `json:"name,omitempty"`
	ValueHint  string `json:"valueHint,omitempty"`
	IsRepeated bool   `json:"isRepeated,omitempty"`
}

// A KeyValue is an environment variable the server reads.
type KeyValue struct {
	Input
	Name string `json:"name"`
}
