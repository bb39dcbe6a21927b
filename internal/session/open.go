package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Open reads the session log in file name and parses it: the bytes as
// ReadFile reads them, the problems as Parse reports them (a
// trace.ErrorList naming the file).
func Open(name string) (*Session, error) {
	data, err := ReadFile(name)
	if err != nil {
		return nil, err
	}
	return Parse(name, data)
}

// OpenRoute reads and parses the routing rules of Split in file name
// (see ParseRoute).
func OpenRoute(name string) (*Route, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return ParseRoute(name, data)
}

// DirLoader is the ResumeOptions.Load of a session log in dir: a nested
// session ID is the log ID.md beside it. An ID that would leave dir, or a
// log that is not there, is not available (nil, nil); a log with
// problems is an error that counts them, which Resume records in the
// pack rather than failing the whole resume.
func DirLoader(dir string) func(id string) (*Session, error) {
	return func(id string) (*Session, error) {
		if !filepath.IsLocal(id) {
			return nil, nil
		}
		file := filepath.Join(dir, id+".md")
		s, err := Open(file)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		var list trace.ErrorList
		switch {
		case errors.As(err, &list):
			return nil, fmt.Errorf("%s: %d problems (see session lint)", file, len(list))
		case err != nil:
			return nil, err
		}
		return s, nil
	}
}

// LearnFiles reads every session log in names and returns the learning
// cases of all of them (Learn), in the order of the files and of each
// file, as JSON Lines: one LearningCase a line. The first log that cannot
// be read or has problems is the error, and nothing is returned.
func LearnFiles(names []string) ([]byte, error) {
	var buf bytes.Buffer
	for _, name := range names {
		s, err := Open(name)
		if err != nil {
			return nil, err
		}
		for _, c := range Learn(s, filepath.ToSlash(name)) {
			b, err := json.Marshal(c)
			if err != nil {
				return nil, fmt.Errorf("encoding learning case %s: %w", c.ID, err)
			}
			buf.Write(b)
			buf.WriteByte('\n')
		}
	}
	return buf.Bytes(), nil
}
