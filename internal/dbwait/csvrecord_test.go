package dbwait

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"reflect"
	"testing"
)

// readRows reads CSV with rowReader, records over max skipped.
func readRows(in []byte, max int) (rows [][]string, skipped []int64, err error) {
	opts := ReadOptions{MaxRecordBytes: max, Skip: func(off int64) { skipped = append(skipped, off) }}
	rr := &rowReader{lr: newLineReader(bufio.NewReader(bytes.NewReader(in)), max), opts: opts}
	for {
		row, _, _, err := rr.next()
		if err == io.EOF {
			return rows, skipped, nil
		}
		if err != nil {
			return rows, skipped, err
		}
		rows = append(rows, row)
	}
}

// FuzzCSVRecords: the bounded CSV reader reads what encoding/csv reads,
// and refuses what it refuses; with a small limit, it skips records at
// increasing offsets inside the input, never failing for their length.
func FuzzCSVRecords(f *testing.F) {
	for _, s := range []string{
		"a,b\n1,2\n", "a,\"b\nc\",d\n\ne\n", "\"a\"\"b\",c\r\nx,y\r\n", "a\"b,c\n", "\"a\"b,c\n", "\"unclosed\n1,2\n",
		"x,\"\"\n,\n", "\"a\r\nb\"\n", "a,b\r", "\"\"\"\",\"\n\"\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		cr := csv.NewReader(bytes.NewReader(in))
		cr.FieldsPerRecord = -1
		want, werr := cr.ReadAll()
		got, _, gerr := readRows(in, 1<<20)
		if werr == nil && gerr == nil && len(got)+len(want) > 0 && !reflect.DeepEqual(got, want) {
			t.Fatalf("read %q\nencoding/csv %q", got, want)
		}
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("error %v, encoding/csv %v", gerr, werr)
		}
		_, skipped, err := readRows(in, 8)
		if err != nil && !errors.Is(err, csv.ErrQuote) && !errors.Is(err, csv.ErrBareQuote) && !errors.Is(err, errUnclosed) {
			t.Fatalf("with a limit of 8 bytes: %v", err)
		}
		for i, off := range skipped {
			if off < 0 || off >= int64(len(in)) || i > 0 && off <= skipped[i-1] {
				t.Fatalf("skipped at %v of %d bytes", skipped, len(in))
			}
		}
	})
}
