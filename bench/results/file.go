package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Load reads and validates a results.json file. A file written by a newer
// schema version is rejected rather than misread; unknown fields written by
// newer minor additions are ignored.
func Load(path string) (*Results, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	return Decode(data)
}

// Decode parses and validates the content of a results.json file.
func Decode(data []byte) (*Results, error) {
	var probe struct {
		SchemaVersion int `json:"schema_version"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("results: not a results file: %w", err)
	}
	if probe.SchemaVersion > SchemaVersion {
		return nil, fmt.Errorf("results: schema version %d is newer than this program's %d", probe.SchemaVersion, SchemaVersion)
	}
	var r Results
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// Encode validates r and returns its indented JSON.
func (r *Results) Encode() ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	return buf.Bytes(), nil
}

// Save validates r and writes it to path atomically (a temporary file in the
// same directory, then a rename), so an interrupted write never leaves a
// truncated results.json behind.
func (r *Results) Save(path string) error {
	data, err := r.Encode()
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".results-*.json")
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := f.Chmod(0o644); err != nil { // CreateTemp makes it 0600
		f.Close()
		return fmt.Errorf("results: %w", err)
	}
	defer os.Remove(f.Name()) // no-op after a successful rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("results: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}
