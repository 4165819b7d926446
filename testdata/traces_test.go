package testdata

import "testing"

func TestTracesDecode(t *testing.T) {
	traces, err := Traces()
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) < 40 {
		t.Fatalf("%d traces, want at least 40", len(traces))
	}
	for _, tr := range traces {
		if len(tr.Steps) == 0 || tr.Steps[len(tr.Steps)-1].Digest == "" {
			t.Fatalf("trace %s: the last step must check the view", tr.Name)
		}
		for i, s := range tr.Steps {
			if len(s.Event) == 0 || len(s.Output) == 0 {
				t.Fatalf("trace %s step %d: empty event or output", tr.Name, i+1)
			}
		}
	}
}
