// Package httpurl checks the HTTP URLs latscope's commands and libraries
// are given: one rule for the load generator, capture and the lab.
package httpurl

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
)

// Check checks that s is an absolute http or https URL with a host and, if
// it has a port, one from 1 to 65535. The error says what is wrong, not s:
// callers name the option that held it.
func Check(s string) error {
	_, err := Parse(s)
	return err
}

// Parse is Check that also returns the parsed URL.
func Parse(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err
		}
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, errors.New("scheme must be http:// or https://")
	}
	if u.Hostname() == "" {
		return nil, errors.New("no host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("port %s: want 1 to 65535", p)
		}
	}
	return u, nil
}
