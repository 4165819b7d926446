package api

import (
	"errors"
	"net/url"
	"testing"

	"github.com/agentsync/agentsync/synccore"
)

func TestParsePageParams(t *testing.T) {
	cases := []struct {
		query   string
		want    pageParams
		wantErr bool
	}{
		{"", pageParams{Limit: 50}, false},
		{"limit=", pageParams{Limit: 50}, false},
		{"limit=1", pageParams{Limit: 1}, false},
		{"limit=200", pageParams{Limit: 200}, false},
		{"limit=201", pageParams{Limit: 200}, false},
		{"limit=500", pageParams{Limit: 200}, false},
		{"limit=99999999999999999999999", pageParams{Limit: 200}, false},
		{"limit=0", pageParams{}, true},
		{"limit=-1", pageParams{}, true},
		{"limit=-99999999999999999999999", pageParams{}, true},
		{"limit=abc", pageParams{}, true},
		{"limit=1.5", pageParams{}, true},
		{"before_sequence=7", pageParams{Limit: 50, BeforeSequence: 7}, false},
		{"before_sequence=abc", pageParams{}, true},
		{"before_sequence=0", pageParams{}, true},
		{"before_sequence=-3", pageParams{}, true},
		{"include_internal=true", pageParams{Limit: 50, IncludeInternal: true}, false},
		{"include_internal=1", pageParams{Limit: 50, IncludeInternal: true}, false},
		{"include_internal=false", pageParams{Limit: 50}, false},
		{"include_internal=0", pageParams{Limit: 50}, false},
		{"include_internal=yes", pageParams{}, true},
		{"limit=10&before_sequence=3&include_internal=1", pageParams{Limit: 10, BeforeSequence: 3, IncludeInternal: true}, false},
	}
	for _, c := range cases {
		q, err := url.ParseQuery(c.query)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parsePageParams(q)
		if c.wantErr {
			if !errors.Is(err, &synccore.Error{Code: synccore.CodeBadRequest}) {
				t.Errorf("%q: want bad_request, got %v", c.query, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.query, err)
			continue
		}
		if got != c.want {
			t.Errorf("%q: got %+v, want %+v", c.query, got, c.want)
		}
	}
}
