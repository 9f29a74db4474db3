package acl

import "sync/atomic"

// File is an ACL loaded from a path that can be re-read (on SIGHUP). A failed
// reload keeps the rules that were in force. All methods are safe for
// concurrent use; Allowed never blocks on a reload.
type File struct {
	path    string
	current atomic.Pointer[ACL]
}

// OpenFile loads the ACL at path. It fails if the file cannot be read or is
// invalid, so a server never starts without the rules it was given.
func OpenFile(path string) (*File, error) {
	a, err := Load(path)
	if err != nil {
		return nil, err
	}
	f := &File{path: path}
	f.current.Store(a)
	return f, nil
}

// Path returns the file's path.
func (f *File) Path() string { return f.path }

// Reload re-reads the file. On error the previous rules stay in force and the
// error says why.
func (f *File) Reload() error {
	a, err := Load(f.path)
	if err != nil {
		return err
	}
	f.current.Store(a)
	return nil
}

// ACL returns the rules currently in force.
func (f *File) ACL() *ACL { return f.current.Load() }

// Allowed reports whether identity may claim lock under the rules currently
// in force.
func (f *File) Allowed(identity, lock string) bool { return f.current.Load().Allowed(identity, lock) }
