package catalog

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzRegistryJSON feeds arbitrary registry answers (a page of the
// servers list) through what the catalog does with them: the envelope,
// each server.json made an Entry, its validation, the choice of a package
// to run and version comparisons. None may panic; an entry that is
// accepted has a valid name, a valid suggested short name and a status;
// cloning it gives an equal, independent entry; version comparison is
// antisymmetric. Seeds are in testdata/fuzz/FuzzRegistryJSON.
func FuzzRegistryJSON(f *testing.F) {
	f.Add([]byte(`{"servers":[{"server":{"name":"io.github.a/b-mcp","version":"1.0.0","packages":[{"registryType":"npm","identifier":"b","version":"1.0.0","transport":{"type":"stdio"}}]},"_meta":{"io.modelcontextprotocol.registry/official":{"status":"active","isLatest":true}}}],"metadata":{"nextCursor":"x","count":1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var page listResponse
		if json.Unmarshal(data, &page) != nil {
			return
		}
		var prev string
		for _, s := range page.Servers {
			e, err := s.entry()
			if err != nil {
				_ = err.Error()
				continue
			}
			if !ValidName(e.Name) || !validShortName(e.ShortName) || e.Status == "" || e.Source != SourceRegistry {
				t.Fatalf("accepted entry with bad fields: name %q short %q status %q source %q", e.Name, e.ShortName, e.Status, e.Source)
			}
			_ = e.Validate()
			c := e.clone()
			if !reflect.DeepEqual(c, e) {
				t.Fatalf("clone differs:\n%#v\n%#v", c, e)
			}
			for _, p := range e.RunnablePackages() {
				_ = p.Runnable()
				_ = p.ExactVersion()
				var inputs []Input
				for _, a := range append(p.RuntimeArguments, p.PackageArguments...) {
					inputs = append(inputs, a.Input)
				}
				for _, kv := range p.EnvironmentVars {
					inputs = append(inputs, kv.Input)
					_ = LooksSecret(kv.Name)
				}
				for _, in := range inputs {
					_ = in.Check("value")
					_ = in.Check("")
				}
			}
			if p, err := e.RunnablePackage(); err == nil {
				if p.Runnable() != nil {
					t.Fatalf("RunnablePackage chose a package that is not runnable: %+v", p)
				}
			}
			if prev != "" {
				ab, okA := CompareVersions(prev, e.Version)
				ba, okB := CompareVersions(e.Version, prev)
				if okA != okB || okA && ab != -ba {
					t.Fatalf("CompareVersions(%q, %q) = %d, %v but the reverse = %d, %v", prev, e.Version, ab, okA, ba, okB)
				}
			}
			prev = e.Version
		}
	})
}
