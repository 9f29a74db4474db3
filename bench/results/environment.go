package results

import (
	"encoding/json"
	"strings"
)

// UnmarshalJSON reads an environment, and from the files of older runs,
// which kept a measured server's version beside the machine's as
// "<role>_version" (the role the contender reported for its server), that
// version into Servers: the server of that role gets it when it has none,
// or a server of that role without an address is added. The schema names
// no server kind; Servers holds every server's version.
func (e *Environment) UnmarshalJSON(data []byte) error {
	type plain Environment // without this method
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return err
	}
	*e = Environment(p)
	for key, raw := range fields {
		role, ok := strings.CutSuffix(key, "_version")
		if !ok || role == "" || environmentVersions[key] {
			continue
		}
		var version string
		if json.Unmarshal(raw, &version) != nil || version == "" {
			continue
		}
		e.setServerVersion(role, version)
	}
	return nil
}

// environmentVersions are the fields of Environment that hold a version
// of the machine's software, not a measured server's.
var environmentVersions = map[string]bool{"go_version": true, "docker_version": true}

// setServerVersion gives the servers of role the version where they have
// none; a role without a server is added without an address.
func (e *Environment) setServerVersion(role, version string) {
	found := false
	for i, s := range e.Servers {
		if s.Role == role {
			found = true
			if s.Version == "" {
				e.Servers[i].Version = version
			}
		}
	}
	if !found {
		e.Servers = append(e.Servers, Server{Role: role, Version: version})
	}
}
