package pprofexport

import (
	"github.com/latscope/latscope/internal/opterr"
	"io"
	"path/filepath"

	"github.com/google/pprof/profile"

	"github.com/latscope/latscope/internal/atomicfile"
	"github.com/latscope/latscope/internal/budget"
)

// Files are the names WriteDir writes, in order.
var Files = []string{"wall.pb.gz", "offcpu.pb.gz", "critical.pb.gz"}

// Profiles builds the three profiles WriteDir writes, in the order of Files.
func Profiles(res *budget.Result, opts Options) ([]*profile.Profile, error) {
	makers := []func(*budget.Result, Options) (*profile.Profile, error){Wall, OffCPU, Critical}
	ps := make([]*profile.Profile, len(makers))
	for i, mk := range makers {
		p, err := mk(res, opts)
		if err != nil {
			return nil, err
		}
		ps[i] = p
	}
	return ps, nil
}

// Writers returns, for each of Files, a function writing that profile
// gzip-compressed, for callers that write the files together with others
// (all or nothing).
func Writers(res *budget.Result, opts Options) ([]func(io.Writer) error, error) {
	ps, err := Profiles(res, opts)
	if err != nil {
		return nil, err
	}
	ws := make([]func(io.Writer) error, len(ps))
	for i, p := range ps {
		ws[i] = p.Write
	}
	return ws, nil
}

// WriteDir writes the three profiles (wall.pb.gz, offcpu.pb.gz,
// critical.pb.gz) into dir, creating it, and returns their paths. The files
// are written all or nothing (package atomicfile): on any error no profile
// is written, previous ones are left as they were, and a directory created
// for them is removed. A target that is not a regular file is refused.
func WriteDir(dir string, res *budget.Result, opts Options) ([]string, error) {
	ws, err := Writers(res, opts)
	if err != nil {
		return nil, err
	}
	var set atomicfile.Set
	set.Dir(dir)
	for i, w := range ws {
		set.Add(filepath.Join(dir, Files[i]), w)
	}
	if err := set.Commit(); err != nil {
		return nil, opterr.Wrap("pprof", err)
	}
	return set.Paths(), nil
}
