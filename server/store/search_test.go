package store

import (
	"strings"
	"testing"
)

func TestSnippet(t *testing.T) {
	long := strings.Repeat("filler ", 30)
	for _, tc := range []struct {
		text  string
		terms []string
		want  string
	}{
		{"Where is the <b>zebra</b> & co?", []string{"zebra"}, "Where is the &lt;b&gt;<mark>zebra</mark>&lt;/b&gt; &amp; co?"},
		{"  (Zebras\n\n run) ", []string{"zebra"}, "(<mark>Zebras</mark> run)"},
		{long + "the zebra " + long, []string{"zebra"}, "…filler filler filler the <mark>zebra</mark> filler filler filler filler filler filler filler filler filler filler filler…"},
		{"zebra " + long, []string{"zebra"}, "<mark>zebra</mark> filler filler filler filler filler filler filler filler filler filler filler filler filler filler filler…"},
		{"a \"quoted\" 'x'", []string{"x"}, "a &#34;quoted&#34; &#39;<mark>x</mark>&#39;"},
		{"?!", []string{"x"}, ""},
	} {
		if got := Snippet(tc.text, tc.terms); got != tc.want {
			t.Errorf("Snippet(%q, %q) =\n%q, want\n%q", tc.text, tc.terms, got, tc.want)
		}
	}
}

func TestSearchTerms(t *testing.T) {
	got, err := SearchTerms(`  Zebra's "NEAR(" OR* café-1 `)
	if err != nil || strings.Join(got, ",") != "zebra,s,near,or,café,1" {
		t.Fatalf("SearchTerms = %q, %v", got, err)
	}
}
