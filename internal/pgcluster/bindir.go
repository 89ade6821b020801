package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrNoBinaries is wrapped by errors from FindBinDir and Start when no
// initdb/postgres pair is found.
var ErrNoBinaries = errors.New("no PostgreSQL server binaries (initdb, postgres) found: " +
	"install the Debian package postgresql (apt-get install postgresql) " +
	"or use an existing PostgreSQL server")

// debianRoot holds one bin directory per installed major version on Debian
// and Ubuntu.
const debianRoot = "/usr/lib/postgresql"

// FindBinDir returns the directory holding initdb and postgres: the newest
// /usr/lib/postgresql/<version>/bin, else the directory of initdb on PATH,
// else `pg_config --bindir`.
func FindBinDir() (string, error) {
	for _, dir := range debianBinDirs() {
		if hasBinaries(dir) == nil {
			return dir, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if dir := filepath.Dir(p); hasBinaries(dir) == nil {
			return dir, nil
		}
	}
	if dir, err := pgConfigBinDir(); err == nil && hasBinaries(dir) == nil {
		return dir, nil
	}
	return "", fmt.Errorf("pgcluster: searched %s/*/bin, PATH and pg_config: %w", debianRoot, ErrNoBinaries)
}

// debianBinDirs lists /usr/lib/postgresql/*/bin, newest version first.
func debianBinDirs() []string {
	ents, err := os.ReadDir(debianRoot)
	if err != nil {
		return nil
	}
	var vers []string
	for _, e := range ents {
		if versionKey(e.Name()) >= 0 {
			vers = append(vers, e.Name())
		}
	}
	slices.SortFunc(vers, func(a, b string) int { return versionKey(b) - versionKey(a) })
	dirs := make([]string, len(vers))
	for i, v := range vers {
		dirs[i] = filepath.Join(debianRoot, v, "bin")
	}
	return dirs
}

// versionKey orders "9.6" < "10" < "15": major*1000+minor, -1 if not a version.
func versionKey(s string) int {
	major, minor, _ := strings.Cut(s, ".")
	m, err := strconv.Atoi(major)
	if err != nil || m < 0 || m > 1e6 {
		return -1
	}
	n, err := strconv.Atoi(minor)
	if minor == "" {
		n, err = 0, nil
	}
	if err != nil || n < 0 || n > 999 {
		return -1
	}
	return m*1000 + n
}

// pgConfigBinDir asks pg_config on PATH for the bin directory.
func pgConfigBinDir() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "pg_config", "--bindir").Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// hasBinaries reports whether dir holds executable initdb and postgres.
func hasBinaries(dir string) error {
	for _, name := range []string{"initdb", "postgres"} {
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("pgcluster: %s: %w", p, ErrNoBinaries)
		}
		if fi.IsDir() || fi.Mode()&0o111 == 0 {
			return fmt.Errorf("pgcluster: %s is not executable: %w", p, ErrNoBinaries)
		}
	}
	return nil
}
