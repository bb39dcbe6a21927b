package source

// FileStat is a trace file as the walk of a load or scan found it, before
// reading it: what a caller needs to tell, next time, whether the file
// changed without reading it (Options.Unchanged).
type FileStat struct {
	// Rel is the path relative to the loaded directory, slash-separated
	// (the Origin.Path of its traces).
	Rel string
	// Path is the file's absolute, cleaned path: the directory, its
	// symlinks resolved, joined with Rel. The same file reached through
	// two spellings of the directory has one Path.
	Path string
	// Size and ModTime (Unix nanoseconds) are as the walk found them;
	// for a symlink, its target's.
	Size, ModTime int64
	// SourceHash is the source hash of a *.json file's document once
	// the file was read, "" for a JSON Lines file (its records have one
	// each) and for a file that could not be read.
	SourceHash string
}

// skipUnchanged returns the files unchanged does not report unchanged,
// and how many it does. The walk's stat is what is asked, so a file is
// not opened to be left out.
func skipUnchanged(files []file, unchanged func(FileStat) bool) ([]file, int) {
	if unchanged == nil {
		return files, 0
	}
	kept := files[:0:0]
	for _, f := range files {
		if !unchanged(f.stat()) {
			kept = append(kept, f)
		}
	}
	return kept, len(files) - len(kept)
}

func (f *file) stat() FileStat {
	return FileStat{Rel: f.rel, Path: f.path, Size: f.size, ModTime: f.mtime}
}

// stats lists the files as FileStats, in their order.
func stats(files []file) []FileStat {
	out := make([]FileStat, len(files))
	for i := range files {
		out[i] = files[i].stat()
	}
	return out
}
