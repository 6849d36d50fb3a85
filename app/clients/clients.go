// Package clients reads and edits the MCP configuration files of other
// applications (Claude Desktop, Cursor, VS Code, Codex, Zed, Continue, …) so
// that they reach Switchboard's gateway.
//
// It is one table of clients (Table) plus one careful writer. Every change is
// first computed as a Plan — the file's path, its bytes, a hash of them, the
// new bytes and a line diff — and nothing is written until Apply is called
// with that plan. Apply locks the file (a lock file in the state folder, and
// a mutex per file in the process: see Editor.Do), re-reads it and refuses
// when it changed since the plan, backs the file up before the first change
// Switchboard makes to it, and replaces it atomically (app/atomicfile:
// same-directory temporary file, fsync, one more comparison of the target,
// rename; the mode is kept and symbolic links are followed).
//
// Switchboard touches only entries it can prove it wrote: each client
// file's ownership record (in the state folder) holds the name and a
// fingerprint of every entry it wrote, and entries pointing at the gateway
// or running `switchboard connect` are its own too. A same-named entry it
// did not write is a conflict (Plan.Conflicts) that Apply refuses unless the
// change takes it over. The record also keeps the file as it was before the
// first connect, so that disconnect gives those bytes back while nothing
// else has changed the file.
//
// Edits are surgical: the file is parsed (hujson for JSON and JSONC, the
// go-toml/v2 parser for TOML, the yaml.v3 node tree for YAML) only to find
// where the servers object and Switchboard's entries are, and then just those
// bytes are inserted, replaced or removed. Every other key, its order,
// comments, whitespace and line endings stay as they were. A file that does
// not parse, or a strict-JSON client's file with comments or trailing
// commas, is never written; the error (*ParseError) names the file, the
// line and the column. A read-only file or folder is refused unless forced.
package clients

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Format is the syntax of a client's configuration file.
type Format string

const (
	// JSON is strict JSON: Switchboard never adds comments or trailing
	// commas to it.
	JSON Format = "json"
	// JSONC is JSON with comments and trailing commas (VS Code, Zed).
	JSONC Format = "jsonc"
	// TOML is Codex's config.toml.
	TOML Format = "toml"
	// YAML is Continue's config.yaml.
	YAML Format = "yaml"
)

// Remote says how a client spells an entry for a streamable-HTTP server.
type Remote int

const (
	// Bridge: the client cannot reach a URL from its file (Claude Desktop);
	// the entry launches `switchboard connect` instead:
	// {"command": BIN, "args": ["connect"], "env": {"SWITCHBOARD_TOKEN": T}}.
	Bridge Remote = iota
	// URLHeaders: {"url": U, "headers": {"Authorization": "Bearer T"}}.
	URLHeaders
	// TypeHTTP: {"type": "http", "url": U, "headers": {…}}.
	TypeHTTP
	// ServerURL: {"serverUrl": U, "headers": {…}} (Windsurf).
	ServerURL
	// HTTPURL: {"httpUrl": U, "headers": {…}} (Gemini CLI).
	HTTPURL
	// StreamableHTTP: {"type": "streamableHttp", "url": U, "headers": {…}} (Cline).
	StreamableHTTP
	// CodexHTTP: url = U, http_headers = { Authorization = "Bearer T" }.
	CodexHTTP
	// ContinueHTTP: a list item {name, type: streamable-http, url,
	// requestOptions: {headers: {…}}}.
	ContinueHTTP
	// OpenCodeRemote: {"type": "remote", "url": U, "headers": {…},
	// "enabled": true} (OpenCode).
	OpenCodeRemote
	// TypeStreamableHTTP: {"type": "streamable-http", "url": U,
	// "headers": {…}} (Roo Code).
	TypeStreamableHTTP
	// CopilotHTTP: {"type": "http", "url": U, "headers": {…}, "tools":
	// ["*"]} (GitHub Copilot CLI, which loads no tool of an entry without
	// "tools").
	CopilotHTTP
	// GooseHTTP: an extension {enabled: true, type: streamable_http, name,
	// description, uri: U, headers: {…}} under Goose's extensions mapping.
	GooseHTTP
	// VibeHTTP: an [[mcp_servers]] table {name, transport =
	// "streamable-http", url = U, headers = {…}} (Mistral Vibe).
	VibeHTTP
	// DeepLink: the client keeps no file a program may edit; connect
	// offers it a link it opens to install the entry, which the user
	// confirms in the app (Cherry Studio). See OfferLink.
	DeepLink
)

// ErrNoWorkspace is the path of a workspace's client (vscode-workspace)
// when no workspace folder was given: there is no file to speak of, which
// is not a file that could not be read.
var ErrNoWorkspace = errors.New("no workspace folder given")

// Env is what a client's path depends on. Tests build one around a
// temporary home; EnvFromOS reads the real one.
type Env struct {
	GOOS          string // "darwin", "windows", "linux", …; empty means runtime.GOOS
	Home          string // the user's home directory
	AppData       string // %APPDATA%; empty means Home\AppData\Roaming
	LocalAppData  string // %LOCALAPPDATA%; empty means Home\AppData\Local
	XDGConfigHome string // $XDG_CONFIG_HOME; empty means Home/.config
	CodexHome     string // $CODEX_HOME; empty means Home/.codex
	ClaudeConfig  string // $CLAUDE_CONFIG_DIR; empty means Home
	CopilotHome   string // $COPILOT_HOME; empty means Home/.copilot
	VibeHome      string // $VIBE_HOME; empty means Home/.vibe
	KimiCodeHome  string // $KIMI_CODE_HOME; empty means Home/.kimi-code
	Workspace     string // the folder of a workspace, for "vscode-workspace"
	// PathList is $PATH, where Detect looks for clients' commands (claude).
	PathList string
}

// EnvFromOS describes the current user's environment. workspace may be
// empty.
func EnvFromOS(workspace string) (Env, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return Env{}, fmt.Errorf("finding the home directory: %w", err)
	}
	return Env{
		GOOS:          runtime.GOOS,
		Home:          home,
		AppData:       os.Getenv("APPDATA"),
		LocalAppData:  os.Getenv("LOCALAPPDATA"),
		XDGConfigHome: os.Getenv("XDG_CONFIG_HOME"),
		CodexHome:     os.Getenv("CODEX_HOME"),
		ClaudeConfig:  os.Getenv("CLAUDE_CONFIG_DIR"),
		CopilotHome:   os.Getenv("COPILOT_HOME"),
		VibeHome:      os.Getenv("VIBE_HOME"),
		KimiCodeHome:  os.Getenv("KIMI_CODE_HOME"),
		Workspace:     workspace,
		PathList:      os.Getenv("PATH"),
	}, nil
}

func (e Env) goos() string {
	if e.GOOS == "" {
		return runtime.GOOS
	}
	return e.GOOS
}

func (e Env) appData() string {
	if e.AppData != "" {
		return e.AppData
	}
	return filepath.Join(e.Home, "AppData", "Roaming")
}

func (e Env) localAppData() string {
	if e.LocalAppData != "" {
		return e.LocalAppData
	}
	return filepath.Join(e.Home, "AppData", "Local")
}

func (e Env) xdgConfig() string {
	if e.XDGConfigHome != "" {
		return e.XDGConfigHome
	}
	return filepath.Join(e.Home, ".config")
}

// appSupport is the per-user application data folder of VS Code-like and
// Electron applications: ~/Library/Application Support, %APPDATA% or
// $XDG_CONFIG_HOME.
func (e Env) appSupport() string {
	switch e.goos() {
	case "darwin":
		return filepath.Join(e.Home, "Library", "Application Support")
	case "windows":
		return e.appData()
	default:
		return e.xdgConfig()
	}
}

// A Client is one application whose configuration file Switchboard edits.
// The zero value is not useful; the clients are the entries of Table.
type Client struct {
	ID   string // "claude-desktop", "cursor", …
	Name string // as shown to people
	// Format is the syntax of the file.
	Format Format
	// ServersKey is the key path of the object (for YAML: the list) that
	// holds the servers, e.g. ["mcpServers"]. For TOML it is the table,
	// ["mcp_servers"].
	ServersKey []string
	// Remote is how an entry for the gateway is spelled.
	Remote Remote
	// List says that the servers are a list of tables (mappings), each
	// with its "name", rather than a table keyed by name: Continue's
	// mcpServers, Mistral Vibe's [[mcp_servers]].
	List bool
	// Caveat is what a user must know about the client's entry although
	// the file holds it (Gemini CLI's untrusted folders), for the connect
	// output and the client's card; "" for none.
	Caveat string
	// StdioType is the "type" value stdio entries need, if any ("stdio"
	// for VS Code); it is used only for the bridge entry.
	StdioType string
	// ToolLimit is how many tools the client takes before it drops some or
	// refuses the request; 0 means not known. The API warns when a
	// client's endpoint offers more (a profile is the way out).
	ToolLimit int
	// ToolLimitSource says where ToolLimit comes from, for whoever checks
	// it again when the client changes.
	ToolLimitSource string
	// ToolNames is how the client names a tool of its entry for its
	// model, where that is documented or was seen; the zero value is
	// "not known" (the name as listed, within MaxToolName). The gateway
	// lists the client shorter names accordingly (ToolNameBudget).
	ToolNames ToolNaming
	path      func(Env) (string, error)
	// installed, when set, tells whether the client is installed although
	// its file does not exist yet; nil means "the folder that would hold
	// the file exists". Claude Code needs it: its file lives in the home
	// folder itself, which always exists.
	installed func(Env) bool
}

// MaxToolName is the longest tool name a model is handed: the Anthropic
// and OpenAI APIs take at most 64 characters (Cursor and VS Code refuse
// longer names too).
const MaxToolName = 64

// ToolNaming is how a client names an MCP tool for its model.
type ToolNaming struct {
	// Prefix is put before the tool's name as the server lists it;
	// "{entry}" in it stands for the name of the client's entry.
	Prefix string
	// Limit is the longest name the client hands its model; 0 means
	// MaxToolName.
	Limit int
	// Source says where the rule comes from, for whoever checks it again
	// when the client changes.
	Source string
}

// ToolNameBudget is the longest tool name an endpoint may list to the
// client whose ID is id, so that the name the client hands its model
// (with its own prefix) stays within its limit: the endpoint of the entry
// EntryName (/mcp, a profile's) for server "", else server's own
// (/mcp/<server>), whose entry is EntryName-<server>. MaxToolName for a
// client whose naming is not known (or no client: the CLI's token, a
// hand-made one).
func ToolNameBudget(id, server string) int {
	c, ok := Lookup(id)
	if !ok {
		return MaxToolName
	}
	limit := c.ToolNames.Limit
	if limit == 0 {
		limit = MaxToolName
	}
	// The prefix's length with the entry's name in it, counted rather
	// than made: the gateway asks on every request.
	entry := len(EntryName)
	if server != "" {
		entry += len("-") + len(server)
	}
	const placeholder = "{entry}"
	return limit - len(c.ToolNames.Prefix) - strings.Count(c.ToolNames.Prefix, placeholder)*(entry-len(placeholder))
}

// Path is the client's configuration file in env.
//
// For a DeepLink client it is the app's data folder, which tells whether
// it is installed: Switchboard never writes into it.
func (c Client) Path(env Env) (string, error) {
	if env.Home == "" && c.ID != "vscode-workspace" {
		return "", fmt.Errorf("%s: no home directory given", c.ID)
	}
	return c.path(env)
}

// MSIXPackage is the package folder of Claude Desktop's Windows Store
// (MSIX) install. Its virtualized %APPDATA% lives beneath it.
const MSIXPackage = "Claude_pzs8sxrjxfjjc"

// Table is every client Switchboard knows, in the order they are shown.
// Tool limits are given only where the client's documentation or its own
// error message states one; the others are 0 (not known). So is the tool
// naming: Claude Desktop, Cursor, VS Code (and Insiders), Windsurf, Zed,
// Cline, Roo Code, LM Studio, Continue, Kiro, Amp, Copilot CLI, Qwen
// Code, Trae, Antigravity and Kimi CLI document none that we know of, and
// have none here.
var Table = []Client{
	{
		ID: "claude-desktop", Name: "Claude Desktop", Format: JSON,
		ServersKey: []string{"mcpServers"}, Remote: Bridge,
		path: func(e Env) (string, error) {
			const file = "claude_desktop_config.json"
			switch e.goos() {
			case "darwin":
				return filepath.Join(e.Home, "Library", "Application Support", "Claude", file), nil
			case "windows":
				// The MSIX install redirects %APPDATA% into its package
				// folder; when that folder exists it is the one the app reads.
				msix := filepath.Join(e.localAppData(), "Packages", MSIXPackage, "LocalCache", "Roaming", "Claude")
				if fi, err := os.Stat(msix); err == nil && fi.IsDir() {
					return filepath.Join(msix, file), nil
				}
				return filepath.Join(e.appData(), "Claude", file), nil
			default: // no official Linux build; community builds use this
				return filepath.Join(e.xdgConfig(), "Claude", file), nil
			}
		},
	},
	{
		ID: "claude-code", Name: "Claude Code", Format: JSON,
		ServersKey: []string{"mcpServers"}, Remote: TypeHTTP,
		ToolNames: ToolNaming{Prefix: "mcp__{entry}__", Limit: MaxToolName,
			Source: "Claude Code's docs (MCP, permissions): a server's tool is mcp__<server>__<tool>; the Anthropic API takes names " +
				"of at most 64 characters. Seen (issue 26): with a 27-character server name, 11 of the 41 names Claude Code sent were over 64"},
		path: func(e Env) (string, error) {
			if e.ClaudeConfig != "" {
				return filepath.Join(e.ClaudeConfig, ".claude.json"), nil
			}
			return filepath.Join(e.Home, ".claude.json"), nil
		},
		// Claude Code keeps its settings in ~/.claude/ (or
		// $CLAUDE_CONFIG_DIR) from its first run, before any server is
		// added; an npm or native install puts `claude` on PATH.
		installed: func(e Env) bool {
			dir := filepath.Join(e.Home, ".claude")
			if e.ClaudeConfig != "" {
				dir = e.ClaudeConfig
			}
			return isDir(dir) || onPath(e, "claude")
		},
	},
	{
		ID: "cursor", Name: "Cursor", Format: JSON,
		ServersKey: []string{"mcpServers"}, Remote: URLHeaders,
		ToolLimit:       40,
		ToolLimitSource: "Cursor's MCP docs and forum: the agent is given at most about 40 tools (the first ones listed)",
		path: func(e Env) (string, error) {
			return filepath.Join(e.Home, ".cursor", "mcp.json"), nil
		},
	},
	{
		ID: "vscode", Name: "VS Code", Format: JSONC,
		ServersKey: []string{"servers"}, Remote: TypeHTTP, StdioType: "stdio",
		ToolLimit:       128,
		ToolLimitSource: `GitHub Copilot Chat in VS Code: "Cannot have more than 128 tools per request" (microsoft/vscode-copilot-release#11653)`,
		path: func(e Env) (string, error) {
			return filepath.Join(e.appSupport(), "Code", "User", "mcp.json"), nil
		},
	},
	{
		ID: "vscode-workspace", Name: "VS Code (workspace)", Format: JSONC,
		ServersKey: []string{"servers"}, Remote: TypeHTTP, StdioType: "stdio",
		ToolLimit:       128,
		ToolLimitSource: `GitHub Copilot Chat in VS Code: "Cannot have more than 128 tools per request" (microsoft/vscode-copilot-release#11653)`,
		path: func(e Env) (string, error) {
			if e.Workspace == "" {
				return "", fmt.Errorf("vscode-workspace: %w", ErrNoWorkspace)
			}
			return filepath.Join(e.Workspace, ".vscode", "mcp.json"), nil
		},
	},
	{
		// The same file as VS Code's, in the Insiders build's own folder
		// (VS Code docs, "MCP servers": the user mcp.json is in the
		// profile's User folder; ToolHive writes "Code - Insiders" too).
		ID: "vscode-insiders", Name: "VS Code Insiders", Format: JSONC,
		ServersKey: []string{"servers"}, Remote: TypeHTTP, StdioType: "stdio",
		ToolLimit:       128,
		ToolLimitSource: `GitHub Copilot Chat in VS Code: "Cannot have more than 128 tools per request" (microsoft/vscode-copilot-release#11653)`,
		path: func(e Env) (string, error) {
			return filepath.Join(e.appSupport(), "Code - Insiders", "User", "mcp.json"), nil
		},
	},
	{
		ID: "windsurf", Name: "Windsurf", Format: JSON,
		ServersKey: []string{"mcpServers"}, Remote: ServerURL,
		ToolLimit:       100,
		ToolLimitSource: `Windsurf docs, Cascade > MCP: "Cascade has a limit of 100 total tools that it has access to at any given time" (docs.windsurf.com/windsurf/cascade/mcp)`,
		path: func(e Env) (string, error) {
			return filepath.Join(e.Home, ".codeium", "windsurf", "mcp_config.json"), nil
		},
	},
	{
		ID: "gemini-cli", Name: "Gemini CLI", Format: JSON,
		ServersKey: []string{"mcpServers"}, Remote: HTTPURL,
		// Gemini CLI adds server__ only to a name another server also
		// has, which the gateway's names are not.
		ToolNames: ToolNaming{Limit: 63,
			Source: "google-gemini/gemini-cli docs/tools/mcp-server.md: tool names are sanitized and cut to 63 characters"},
		Caveat: "Gemini CLI lists Switchboard as \"Disabled\" in folders it does not trust (its folder trust, " +
			"security.folderTrust): there it starts no MCP server of the file; trust the folder in Gemini CLI (/permissions) to use Switchboard in it",
		path: func(e Env) (string, error) {
			return filepath.Join(e.Home, ".gemini", "settings.json"), nil
		},
	},
	{
		ID: "codex", Name: "Codex CLI", Format: TOML,
		ServersKey: []string{"mcp_servers"}, Remote: CodexHTTP,
		ToolNames: ToolNaming{Prefix: "{entry}__", Limit: MaxToolName,
			Source: "openai/codex codex-rs/core/src/mcp_connection_manager.rs: tools are qualified <server>__<tool> " +
				"(MCP_TOOL_NAME_DELIMITER), and a name over MAX_TOOL_NAME_LENGTH (64) is replaced by a hash"},
		path: func(e Env) (string, error) {
			if e.CodexHome != "" {
				return filepath.Join(e.CodexHome, "config.toml"), nil
			}
			return filepath.Join(e.Home, ".codex", "config.toml"), nil
		},
	},
	{
		ID: "zed", Name: "Zed", Format: JSONC,
		ServersKey: []string{"context_servers"}, Remote: URLHeaders,
		path: func(e Env) (string, error) {
			switch e.goos() {
			case "windows":
				return filepath.Join(e.appData(), "Zed", "settings.json"), nil
			case "darwin":
				return filepath.Join(e.Home, ".config", "zed", "settings.json"), nil
			default:
				return filepath.Join(e.xdgConfig(), "zed", "settings.json"), nil
			}
		},
	},
	{
		ID: "cline", Name: "Cline", Format: JSON,
		ServersKey: []string{"mcpServers"}, Remote: StreamableHTTP,
		path: func(e Env) (string, error) {
			return filepath.Join(e.appSupport(), "Code", "User", "globalStorage",
				"saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json"), nil
		},
	},
	{
		// Roo Code (docs.roocode.com, features/mcp/using-mcp-in-roo):
		// the global mcp_settings.json in the extension's globalStorage,
		// like Cline's; remote servers are {"type": "streamable-http" |
		// "sse", "url", "headers"}. ToolHive's pkg/client/config.go
		// writes the same path and type.
		ID: "roo-code", Name: "Roo Code", Format: JSON,
		ServersKey: []string{"mcpServers"}, Remote: TypeStreamableHTTP,
		path: func(e Env) (string, error) {
			return filepath.Join(e.appSupport(), "Code", "User", "globalStorage",
				"rooveterinaryinc.roo-cline", "settings", "mcp_settings.json"), nil
		},
	},
	{
		ID: "lm-studio", Name: "LM Studio", Format: JSON,
		ServersKey: []string{"mcpServers"}, Remote: URLHeaders,
		path: func(e Env) (string, error) {
			return filepath.Join(e.Home, ".lmstudio", "mcp.json"), nil
		},
	},
	{
		ID: "continue", Name: "Continue", Format: YAML, List: true,
		ServersKey: []string{"mcpServers"}, Remote: ContinueHTTP,
		path: func(e Env) (string, error) {
			return filepath.Join(e.Home, ".continue", "config.yaml"), nil
		},
	},
	{
		// OpenCode (opencode.ai/docs/config, /docs/mcp-servers): the
		// global config is ~/.config/opencode/opencode.json or .jsonc on
		// every OS (it follows $XDG_CONFIG_HOME, also on macOS and
		// Windows), read as JSONC whatever its extension. Servers are
		// under "mcp": {"type": "remote", "url", "headers", "enabled"} or
		// {"type": "local", "command": [cmd, args…], "environment"}.
		ID: "opencode", Name: "OpenCode", Format: JSONC,
		ServersKey: []string{"mcp"}, Remote: OpenCodeRemote,
		ToolNames: ToolNaming{Prefix: "{entry}_", Limit: MaxToolName,
			Source: "anomalyco/opencode packages/opencode/src/mcp/catalog.ts (1.18): toolName = sanitize(clientName) + \"_\" + sanitize(name); " +
				"the Anthropic and OpenAI APIs take names of at most 64 characters"},
		path: func(e Env) (string, error) {
			dir := filepath.Join(e.xdgConfig(), "opencode")
			// OpenCode merges both files; edit the one the user keeps.
			plain, jsonc := filepath.Join(dir, "opencode.json"), filepath.Join(dir, "opencode.jsonc")
			if !fileExists(plain) && fileExists(jsonc) {
				return jsonc, nil
			}
			return plain, nil
		},
	},
	{
		// Kiro (kiro.dev/docs/mcp/configuration): the user-level
		// ~/.kiro/settings/mcp.json, "mcpServers", remote servers as
		// {"url", "headers"}.
		ID: "kiro", Name: "Kiro", Format: JSON,
		ServersKey: []string{"mcpServers"}, Remote: URLHeaders,
		path: func(e Env) (string, error) {
			return filepath.Join(e.Home, ".kiro", "settings", "mcp.json"), nil
		},
		// Kiro keeps ~/.kiro (steering, extensions) from its first run;
		// settings/ comes only with a first setting.
		installed: func(e Env) bool { return isDir(filepath.Join(e.Home, ".kiro")) },
	},
	{
		// GitHub Copilot CLI (docs.github.com, copilot-cli "Adding MCP
		// servers"; `copilot mcp --help`): ~/.copilot/mcp-config.json, or
		// $COPILOT_HOME/mcp-config.json ($XDG_CONFIG_HOME is not read:
		// seen with 1.0.102). `copilot mcp add` itself writes remote
		// servers as {"tools": ["*"], "type": "http" | "sse", "url",
		// "headers"} and local ones as {"tools", "type": "local",
		// "command", "args", "env"}.
		ID: "copilot-cli", Name: "GitHub Copilot CLI", Format: JSON,
		ServersKey: []string{"mcpServers"}, Remote: CopilotHTTP,
		path: func(e Env) (string, error) {
			if e.CopilotHome != "" {
				return filepath.Join(e.CopilotHome, "mcp-config.json"), nil
			}
			return filepath.Join(e.Home, ".copilot", "mcp-config.json"), nil
		},
	},
	{
		// Amp's CLI (ampcode.com/manual, "MCP"): the flat key
		// "amp.mcpServers" of ~/.config/amp/settings.json, the same
		// key as in VS Code's settings for Amp's extension; remote
		// servers as {"url", "headers"}, local as {"command", "args",
		// "env"}. Read as JSONC, as VS Code-style settings are; Switchboard
		// itself writes neither comments nor trailing commas.
		ID: "amp", Name: "Amp", Format: JSONC,
		ServersKey: []string{"amp.mcpServers"}, Remote: URLHeaders,
		path: func(e Env) (string, error) {
			return filepath.Join(e.xdgConfig(), "amp", "settings.json"), nil
		},
	},
	{
		// Qwen Code, a fork of Gemini CLI (QwenLM/qwen-code
		// docs/tools/mcp-server.md): ~/.qwen/settings.json, "mcpServers",
		// "httpUrl" for streamable HTTP and "url" for SSE, as Gemini CLI.
		ID: "qwen-code", Name: "Qwen Code", Format: JSON,
		ServersKey: []string{"mcpServers"}, Remote: HTTPURL,
		path: func(e Env) (string, error) {
			return filepath.Join(e.Home, ".qwen", "settings.json"), nil
		},
	},
	{
		// Trae (a VS Code fork; its docs, "Add MCP servers": the raw
		// config is the user's mcp.json, "mcpServers", remote servers as
		// {"url", "headers"}): in the app's User folder, like VS Code's
		// (~/Library/Application Support/Trae/User/mcp.json as seen by
		// mcpm.sh, issue 92).
		ID: "trae", Name: "Trae", Format: JSON,
		ServersKey: []string{"mcpServers"}, Remote: URLHeaders,
		path: func(e Env) (string, error) {
			return filepath.Join(e.appSupport(), "Trae", "User", "mcp.json"), nil
		},
	},
	{
		// VS Code Server (VS Code's Remote-SSH, WSL and tunnels: the
		// server on the remote machine keeps the user's data in
		// ~/.vscode-server/data/User on every OS): the same mcp.json as
		// VS Code's, and the same Copilot Chat limit.
		ID: "vscode-server", Name: "VS Code Server (remote)", Format: JSONC,
		ServersKey: []string{"servers"}, Remote: TypeHTTP, StdioType: "stdio",
		ToolLimit:       128,
		ToolLimitSource: `GitHub Copilot Chat in VS Code: "Cannot have more than 128 tools per request" (microsoft/vscode-copilot-release#11653)`,
		path: func(e Env) (string, error) {
			return filepath.Join(e.Home, ".vscode-server", "data", "User", "mcp.json"), nil
		},
		installed: func(e Env) bool { return isDir(filepath.Join(e.Home, ".vscode-server")) },
	},
	{
		// Windsurf's JetBrains plugin (docs.windsurf.com, "Cascade MCP"
		// for JetBrains): ~/.codeium/mcp_config.json, beside the
		// editor's ~/.codeium/windsurf/mcp_config.json, in the same
		// shape and with the same tool limit.
		ID: "windsurf-jetbrains", Name: "Windsurf (JetBrains plugin)", Format: JSON,
		ServersKey: []string{"mcpServers"}, Remote: ServerURL,
		ToolLimit:       100,
		ToolLimitSource: `Windsurf docs, Cascade > MCP: "Cascade has a limit of 100 total tools that it has access to at any given time" (docs.windsurf.com/windsurf/cascade/mcp)`,
		path: func(e Env) (string, error) {
			return filepath.Join(e.Home, ".codeium", "mcp_config.json"), nil
		},
	},
	{
		// Google Antigravity ("Manage MCP servers" > raw config):
		// ~/.gemini/antigravity/mcp_config.json on every OS,
		// "mcpServers", remote servers as {"serverUrl", "headers"} as in
		// Windsurf, which it descends from (the path and serverUrl are
		// also what other managers write, MCP for Unity's Antigravity
		// configurator among them).
		ID: "antigravity", Name: "Antigravity", Format: JSON,
		ServersKey: []string{"mcpServers"}, Remote: ServerURL,
		path: func(e Env) (string, error) {
			return filepath.Join(e.Home, ".gemini", "antigravity", "mcp_config.json"), nil
		},
	},
	{
		// Kimi CLI, the Python one (moonshotai.github.io/kimi-cli,
		// customization/mcp; archived on PyPI for Kimi Code CLI, below):
		// ~/.kimi/mcp.json, "mcpServers", remote servers as {"url",
		// "headers"} (its `kimi mcp add --transport http` writes that).
		ID: "kimi-cli", Name: "Kimi CLI", Format: JSON,
		ServersKey: []string{"mcpServers"}, Remote: URLHeaders,
		path: func(e Env) (string, error) {
			return filepath.Join(e.Home, ".kimi", "mcp.json"), nil
		},
		installed: func(e Env) bool { return isDir(filepath.Join(e.Home, ".kimi")) || onPath(e, "kimi") },
	},
	{
		// Kimi Code CLI, Kimi CLI's successor (moonshotai.github.io/kimi-code,
		// customization/mcp): the user-level ~/.kimi-code/mcp.json (or
		// $KIMI_CODE_HOME/mcp.json), "mcpServers", remote servers as
		// {"url", "headers"}, "enabled": false to turn one off; its tools
		// are named mcp__<server>__<tool>.
		ID: "kimi-code", Name: "Kimi Code CLI", Format: JSON,
		ServersKey: []string{"mcpServers"}, Remote: URLHeaders,
		ToolNames: ToolNaming{Prefix: "mcp__{entry}__", Limit: MaxToolName,
			Source: "moonshotai.github.io/kimi-code, customization/mcp: MCP tools are named mcp__<server>__<tool>; " +
				"the Anthropic and OpenAI APIs take names of at most 64 characters"},
		path: func(e Env) (string, error) {
			if e.KimiCodeHome != "" {
				return filepath.Join(e.KimiCodeHome, "mcp.json"), nil
			}
			return filepath.Join(e.Home, ".kimi-code", "mcp.json"), nil
		},
		installed: func(e Env) bool {
			dir := filepath.Join(e.Home, ".kimi-code")
			if e.KimiCodeHome != "" {
				dir = e.KimiCodeHome
			}
			return isDir(dir)
		},
	},
	{
		// Qoder CLI (docs.qoder.com/cli/mcp-servers, mcp-reference):
		// the user-level ~/.qoder/settings.json, "mcpServers", remote
		// servers as {"type": "http", "url", "headers"}.
		ID: "qoder-cli", Name: "Qoder CLI", Format: JSON,
		ServersKey: []string{"mcpServers"}, Remote: TypeHTTP,
		ToolNames: ToolNaming{Prefix: "mcp__{entry}__", Limit: MaxToolName,
			Source: "docs.qoder.com/cli/mcp-servers: MCP tool names are mcp__<server>__<tool>; " +
				"the Anthropic and OpenAI APIs take names of at most 64 characters"},
		path: func(e Env) (string, error) {
			return filepath.Join(e.Home, ".qoder", "settings.json"), nil
		},
		installed: func(e Env) bool { return isDir(filepath.Join(e.Home, ".qoder")) || onPath(e, "qodercli") },
	},
	{
		// Factory's droid (docs.factory.ai/cli/configuration/mcp):
		// ~/.factory/mcp.json, "mcpServers", remote servers as {"type":
		// "http", "url", "headers"}, "disabled" to turn one off.
		ID: "droid", Name: "Factory droid", Format: JSON,
		ServersKey: []string{"mcpServers"}, Remote: TypeHTTP,
		ToolNames: ToolNaming{Prefix: "{entry}___", Limit: MaxToolName,
			Source: "droid 0.225.2 (@factory/cli-linux-x64), its bundled code: an MCP tool is named `${server}___${tool}`; " +
				"the Anthropic and OpenAI APIs take names of at most 64 characters"},
		path: func(e Env) (string, error) {
			return filepath.Join(e.Home, ".factory", "mcp.json"), nil
		},
		installed: func(e Env) bool { return isDir(filepath.Join(e.Home, ".factory")) || onPath(e, "droid") },
	},
	{
		// Goose (block.github.io/goose docs, guides/config-files): the
		// "extensions" mapping of ~/.config/goose/config.yaml
		// (%APPDATA%\Block\goose\config\config.yaml on Windows), keyed
		// by extension; a remote one is {enabled, type: streamable_http,
		// name, description, uri, headers}, a local one {type: stdio, cmd,
		// args, envs}.
		ID: "goose", Name: "Goose", Format: YAML,
		ServersKey: []string{"extensions"}, Remote: GooseHTTP,
		ToolNames: ToolNaming{Prefix: "{entry}__", Limit: MaxToolName,
			Source: "block/goose crates/goose/src/agents/extension_manager.rs: a tool is named <extension>__<tool>; " +
				"the Anthropic and OpenAI APIs take names of at most 64 characters"},
		path: func(e Env) (string, error) {
			if e.goos() == "windows" {
				return filepath.Join(e.appData(), "Block", "goose", "config", "config.yaml"), nil
			}
			return filepath.Join(e.xdgConfig(), "goose", "config.yaml"), nil
		},
	},
	{
		// Mistral Vibe (docs.mistral.ai/mistral-vibe, configuration >
		// MCP servers; mistralai/mistral-vibe vibe/core/config/models.py):
		// ~/.vibe/config.toml ($VIBE_HOME), an array of tables
		// [[mcp_servers]], each {name, transport = "stdio" | "http" |
		// "streamable-http", url, headers | command, args, env},
		// "disabled" to hide its tools.
		ID: "vibe", Name: "Mistral Vibe", Format: TOML, List: true,
		ServersKey: []string{"mcp_servers"}, Remote: VibeHTTP,
		ToolNames: ToolNaming{Prefix: "{entry}_", Limit: MaxToolName,
			Source: "mistralai/mistral-vibe vibe/core/config/models.py: a server's name is the \"short alias used to prefix tool names\" " +
				"({alias}_{tool}); the Mistral and OpenAI APIs take names of at most 64 characters"},
		path: func(e Env) (string, error) {
			if e.VibeHome != "" {
				return filepath.Join(e.VibeHome, "config.toml"), nil
			}
			return filepath.Join(e.Home, ".vibe", "config.toml"), nil
		},
	},
	{
		// Cherry Studio keeps its MCP servers in its own database, not in
		// a file another program may edit; it installs servers from a
		// deep link, cherrystudio://mcp/install?servers=<base64 JSON>,
		// which the user confirms in the app (CherryHQ/cherry-studio, its
		// handleMcpProtocolUrl: {"mcpServers": {NAME: {"name", "type":
		// "streamableHttp", "baseUrl", "headers"}}}, standard base64,
		// URL-encoded). Its data folder says whether it is installed.
		ID: "cherry-studio", Name: "Cherry Studio", Remote: DeepLink,
		path: func(e Env) (string, error) {
			return filepath.Join(e.appSupport(), "CherryStudio"), nil
		},
	},
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// onPath reports whether an executable called name is in one of the
// folders of env.PathList (with a Windows extension on Windows).
func onPath(env Env, name string) bool {
	names := []string{name}
	if env.goos() == "windows" {
		names = []string{name + ".exe", name + ".cmd", name + ".bat", name + ".ps1"}
	}
	sep := string(os.PathListSeparator)
	if env.goos() == "windows" {
		sep = ";"
	}
	for _, dir := range strings.Split(env.PathList, sep) {
		if dir == "" {
			continue
		}
		for _, n := range names {
			fi, err := os.Stat(filepath.Join(dir, n))
			if err != nil || fi.IsDir() {
				continue
			}
			if env.goos() == "windows" || runtime.GOOS == "windows" || fi.Mode().Perm()&0o111 != 0 {
				return true
			}
		}
	}
	return false
}

// Lookup finds a client of Table by its ID. It copies the one it finds
// only: the gateway asks on every request (ToolNameBudget), and ranging
// over Table by value copied every entry.
func Lookup(id string) (Client, bool) {
	for i := range Table {
		if Table[i].ID == id {
			return Table[i], true
		}
	}
	return Client{}, false
}

// EntryName is the name of the entry that reaches every server through the
// gateway; per-server entries are named EntryName + "-" + server.
const EntryName = "switchboard"

// TokenEnv carries the token to the bridge (see `switchboard connect`).
const TokenEnv = "SWITCHBOARD_TOKEN"

// An Entry is one server as a client's file describes it: either a stdio
// server (Command, Args, Env, Cwd) or a remote one (URL, Headers).
type Entry struct {
	Name    string
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	URL     string
	Headers map[string]string
	// Type is the entry's "type" as the client spells it ("http", "sse",
	// "streamableHttp", "stdio", …); empty when it has none.
	Type string `json:",omitempty"`
	// URLKey is the key that held URL: "url", "serverUrl", "httpUrl" or
	// "baseUrl" (Gemini CLI's "httpUrl" is streamable HTTP, its "url" SSE).
	URLKey string `json:",omitempty"`
	// EnvHeaders (Codex's env_http_headers) maps a header to the
	// environment variable that holds its value.
	EnvHeaders map[string]string `json:",omitempty"`
	// BearerTokenEnv (Codex's bearer_token_env_var) names the environment
	// variable that holds the bearer token sent as Authorization.
	BearerTokenEnv string `json:",omitempty"`
	// Disabled: the client's file turns the server off ("disabled": true,
	// "enabled": false); import keeps it off.
	Disabled bool `json:",omitempty"`
}

// Remote reports whether the entry names a URL rather than a command.
func (e Entry) Remote() bool { return e.URL != "" && e.Command == "" }

// IsSwitchboard reports whether e reaches Switchboard: it points at
// gatewayURL (or below it), or it launches `switchboard connect`.
// gatewayURL may be empty. The name does not count: a user may well call
// an entry of their own "switchboard-docs".
func IsSwitchboard(e Entry, gatewayURL string) bool {
	if gatewayURL != "" && e.URL != "" {
		u := strings.TrimSuffix(gatewayURL, "/")
		if e.URL == u || strings.HasPrefix(e.URL, u+"/") {
			return true
		}
	}
	return isBridgeCommand(e, "")
}
