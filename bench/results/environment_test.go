package results

import (
	"encoding/json"
	"reflect"
	"testing"
)

// An older run's "<role>_version" field lands in Servers, keyed by the
// role its file names; the machine's own versions stay where they are.
func TestEnvironmentReadsOlderServerVersions(t *testing.T) {
	tests := []struct {
		name, in string
		want     []Server
	}{
		{"server of that role gets it", `{"go_version":"go1.26","redis_version":"7.0.15","servers":[{"role":"redis","address":"a:1"},{"role":"monolock","address":"b:2","version":"1"}]}`,
			[]Server{{Role: "redis", Address: "a:1", Version: "7.0.15"}, {Role: "monolock", Address: "b:2", Version: "1"}}},
		{"a recorded version wins", `{"redis_version":"7.0.15","servers":[{"role":"redis","address":"a:1","version":"7.2"}]}`,
			[]Server{{Role: "redis", Address: "a:1", Version: "7.2"}}},
		{"a role without a server is added", `{"redis_version":"7.0.15","docker_version":"20.10"}`,
			[]Server{{Role: "redis", Version: "7.0.15"}}},
		{"nothing older", `{"go_version":"go1.26","docker_version":"20.10"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e Environment
			if err := json.Unmarshal([]byte(tt.in), &e); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(e.Servers, tt.want) {
				t.Errorf("servers = %+v, want %+v", e.Servers, tt.want)
			}
		})
	}
	var e Environment
	if err := json.Unmarshal([]byte(`{"go_version":"go1.26","docker_version":"20.10"}`), &e); err != nil || e.GoVersion != "go1.26" || e.DockerVersion != "20.10" {
		t.Errorf("machine versions = %q, %q (%v)", e.GoVersion, e.DockerVersion, err)
	}
}
