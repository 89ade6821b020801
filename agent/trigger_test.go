package agent

import (
	"testing"
	"time"
)

func TestSlownessFixed(t *testing.T) {
	tests := []struct {
		name    string
		trigger Trigger
		d       time.Duration
		slow    bool
	}{
		{"below", Trigger{Threshold: 100 * time.Millisecond}, 99 * time.Millisecond, false},
		{"equal is not slower", Trigger{Threshold: 100 * time.Millisecond}, 100 * time.Millisecond, false},
		{"above", Trigger{Threshold: 100 * time.Millisecond}, 101 * time.Millisecond, true},
		{"under the floor", Trigger{Threshold: 100 * time.Millisecond, Floor: time.Second}, 200 * time.Millisecond, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			slow, cut := newSlowness(tt.trigger).observe("r", tt.d)
			if slow != tt.slow || cut != tt.trigger.Threshold {
				t.Errorf("observe(%v) = %v, %v; want %v, %v", tt.d, slow, cut, tt.slow, tt.trigger.Threshold)
			}
		})
	}
}

func TestSlownessPercentile(t *testing.T) {
	tests := []struct {
		name   string
		floor  time.Duration
		warm   int           // requests of 1..warm ms before the probe
		probe  time.Duration // the request judged
		slow   bool
		cutMin time.Duration // the threshold is at least this (0: unknown yet)
	}{
		{"not enough requests yet", 0, 5, time.Hour, false, 0},
		{"above the p99", 0, 1000, 995 * time.Millisecond, true, 990 * time.Millisecond},
		{"below the p99", 0, 1000, 500 * time.Millisecond, false, 990 * time.Millisecond},
		{"above the p99 but under the floor", 2 * time.Second, 1000, 995 * time.Millisecond, false, 990 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSlowness(Trigger{Percentile: 99, Window: 1000, Floor: tt.floor})
			for i := 1; i <= tt.warm; i++ {
				s.observe("GET /x", time.Duration(i)*time.Millisecond)
			}
			slow, cut := s.observe("GET /x", tt.probe)
			if slow != tt.slow || cut < tt.cutMin || tt.cutMin == 0 && cut != 0 {
				t.Errorf("observe(%v) = %v, %v; want %v with a threshold ≥ %v", tt.probe, slow, cut, tt.slow, tt.cutMin)
			}
			if other, _ := s.observe("GET /other", tt.probe); other {
				t.Error("another route's first request was slow: routes must have windows of their own")
			}
		})
	}
}
