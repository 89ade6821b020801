package hostsig

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// pfile is a kernel file kept open and re-read with one pread at offset 0, which makes the
// kernel generate fresh contents without the cost of open and close. (os.File.ReadAt would
// read again at the end offset, and a seq_file regenerates the whole text for that.)
type pfile struct {
	f   *os.File
	fd  int
	buf []byte
}

func openPfile(name string) (*pfile, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return &pfile{f: f, fd: int(f.Fd()), buf: make([]byte, 1024)}, nil
}

// read returns the file's contents, valid until the next read. With limit > 0 it returns at
// least the first limit bytes and need not read all (enough for /proc/stat's first line).
func (p *pfile) read(limit int) ([]byte, error) {
	for {
		n, err := syscall.Pread(p.fd, p.buf, 0)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p.f.Name(), err)
		}
		if n == len(p.buf) && (limit <= 0 || n < limit) {
			p.buf = make([]byte, 2*len(p.buf)) // maybe cut short: read again with room
			continue
		}
		return p.buf[:n], nil
	}
}

func (p *pfile) close() {
	if p != nil {
		p.f.Close()
	}
}
