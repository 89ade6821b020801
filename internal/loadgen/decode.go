package loadgen

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/latscope/latscope/internal/loadresult"
)

// A Decoder reads the next Result into its argument. It returns io.EOF after
// the last one, and the same error on every call after a failure. It is
// declared in package loadresult with Result.
type Decoder = loadresult.Decoder

// maxLine bounds a JSON line.
const maxLine = 1 << 20

// sniffLen is how far NewDecoder looks for the first non-space byte.
const sniffLen = 512

// NewDecoder sniffs the format of r: JSON lines if the first non-space byte
// is '{', CSV otherwise.
func NewDecoder(r io.Reader) Decoder {
	br := bufio.NewReader(r)
	head, _ := br.Peek(sniffLen) // a short or failed peek is fine: the decoder meets the error
	if i := bytes.IndexFunc(head, func(c rune) bool { return !isSpace(c) }); i >= 0 && head[i] != '{' {
		return NewCSVDecoder(br)
	}
	return NewJSONDecoder(br)
}

func isSpace(c rune) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// NewJSONDecoder reads the format of NewJSONEncoder. Blank lines are skipped.
func NewJSONDecoder(r io.Reader) Decoder {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	line := 0
	return sticky(func(res *Result) error {
		for sc.Scan() {
			line++
			b := bytes.TrimSpace(sc.Bytes())
			if len(b) == 0 {
				continue
			}
			if err := decodeJSON(b, res); err != nil {
				return fmt.Errorf("results line %d: %w", line, err)
			}
			return nil
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("results line %d: %w", line+1, err)
		}
		return io.EOF
	})
}

func decodeJSON(b []byte, res *Result) error {
	if b[0] != '{' {
		return errors.New("not a JSON object")
	}
	*res = Result{}
	if err := json.Unmarshal(b, res); err != nil {
		return err
	}
	return check(res)
}

// NewCSVDecoder reads the format of NewCSVEncoder. The header row is
// optional.
func NewCSVDecoder(r io.Reader) Decoder {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = len(csvHeader)
	cr.ReuseRecord = true
	first := true
	return sticky(func(res *Result) error {
		rec, err := cr.Read()
		if first && err == nil && slices.Equal(rec, csvHeader) {
			rec, err = cr.Read()
		}
		first = false
		if err == io.EOF {
			return io.EOF
		}
		if err != nil {
			return fmt.Errorf("results csv: %w", err)
		}
		if err := parseCSV(rec, res); err != nil {
			line, _ := cr.FieldPos(0)
			return fmt.Errorf("results csv line %d: %w", line, err)
		}
		return nil
	})
}

// parseCSV fills res from one record of csvHeader's columns.
func parseCSV(rec []string, res *Result) error {
	var p fieldParser
	*res = Result{
		Seq:      p.uint(rec, 0),
		Client:   int(p.int(rec, 1, 32)),
		Intended: p.time(rec, 2),
		Start:    p.time(rec, 3),
		Latency:  time.Duration(p.int(rec, 4, 64)),
		Code:     int(p.int(rec, 5, 32)),
		Error:    rec[6],
		BytesIn:  p.int(rec, 7, 64),
		Warmup:   p.bool(rec, 8),
		Late:     p.bool(rec, 9),
		Dropped:  p.bool(rec, 10),
	}
	if p.err != nil {
		return p.err
	}
	return check(res)
}

// fieldParser parses the columns of a record and keeps the first error,
// naming the column.
type fieldParser struct{ err error }

func (p *fieldParser) fail(rec []string, i int, err error) {
	if p.err == nil {
		p.err = fmt.Errorf("column %s: %w", csvHeader[i], err)
	}
}

func (p *fieldParser) uint(rec []string, i int) uint64 {
	v, err := strconv.ParseUint(rec[i], 10, 64)
	if err != nil {
		p.fail(rec, i, err)
	}
	return v
}

func (p *fieldParser) int(rec []string, i, bits int) int64 {
	v, err := strconv.ParseInt(rec[i], 10, bits)
	if err != nil {
		p.fail(rec, i, err)
	}
	return v
}

func (p *fieldParser) bool(rec []string, i int) bool {
	v, err := strconv.ParseBool(rec[i])
	if err != nil {
		p.fail(rec, i, err)
	}
	return v
}

func (p *fieldParser) time(rec []string, i int) time.Time {
	if rec[i] == "" {
		return time.Time{}
	}
	v, err := time.Parse(time.RFC3339Nano, rec[i])
	if err != nil {
		p.fail(rec, i, err)
	}
	return v
}

// sticky makes dec return its first error on every later call.
func sticky(dec Decoder) Decoder {
	var err error
	return func(r *Result) error {
		if err == nil {
			err = dec(r)
			if err == nil {
				return nil
			}
		}
		return err
	}
}
