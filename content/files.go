package content

import (
	"errors"
	"io"
	"io/fs"
)

// readFile reads a whole file of fsys, refusing one larger than
// [MaxFileSize] without reading more than that.
func readFile(fsys fs.FS, p string) ([]byte, error) {
	f, err := fsys.Open(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &Error{Path: p, Err: invalidf("no such file")}
		}
		return nil, &Error{Path: p, Err: invalidf("%v", err)}
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil {
		if st.IsDir() {
			return nil, &Error{Path: p, Err: invalidf("is a folder, want a file")}
		}
		if st.Size() > MaxFileSize {
			return nil, &Error{Path: p, Err: tooLargef("file is %d bytes (at most %d, 32 MiB)", st.Size(), MaxFileSize)}
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, &Error{Path: p, Err: invalidf("read: %v", err)}
	}
	if len(b) > MaxFileSize {
		return nil, &Error{Path: p, Err: tooLargef("file is more than %d bytes (32 MiB)", MaxFileSize)}
	}
	return b, nil
}
