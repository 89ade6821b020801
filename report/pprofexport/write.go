package pprofexport

import (
	"github.com/latscope/latscope/internal/atomicfile"

	"fmt"
	"os"
	"path/filepath"

	"github.com/google/pprof/profile"

	"github.com/latscope/latscope/budget"
)

// Files are the names WriteDir writes, in order.
var Files = []string{"wall.pb.gz", "offcpu.pb.gz", "critical.pb.gz"}

// WriteDir writes the three profiles (wall.pb.gz, offcpu.pb.gz,
// critical.pb.gz) into dir, creating it, and returns their paths. Each file
// is written to a temporary name and renamed, so a reader never sees a
// partial profile.
func WriteDir(dir string, res *budget.Result, opts Options) ([]string, error) {
	makers := []func(*budget.Result, Options) (*profile.Profile, error){Wall, OffCPU, Critical}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--pprof %s: %w", dir, err)
	}
	var paths []string
	for i, mk := range makers {
		p, err := mk(res, opts)
		if err != nil {
			return paths, err
		}
		path := filepath.Join(dir, Files[i])
		if err := writeAtomic(path, p); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// writeAtomic writes p gzip-compressed to path via a temporary file.
func writeAtomic(path string, p *profile.Profile) error {
	if err := atomicfile.Write(path, p.Write); err != nil {
		return fmt.Errorf("pprof %s: %w", path, err)
	}
	return nil
}
