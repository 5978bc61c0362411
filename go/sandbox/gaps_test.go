package sandbox_test

import (
	"reflect"
	"testing"

	"github.com/clawpatrol/sandbox-host/go/sandbox"
)

func TestGapsReadTheWarningsStructuredForm(t *testing.T) {
	a := sandbox.Availability{Warning: "degraded: Landlock ABI 5 without namespaces; not covered: " +
		"a plugin sees the host's name (close: the namespaces backend); " +
		"no audit (of anything); signals are not scoped (close: Linux 6.12+ (Landlock ABI 6))"}
	want := []sandbox.Gap{
		{What: "a plugin sees the host's name", Close: "the namespaces backend"},
		{What: "no audit (of anything)"},
		{What: "signals are not scoped", Close: "Linux 6.12+ (Landlock ABI 6)"},
	}
	if got := a.Gaps(); !reflect.DeepEqual(got, want) {
		t.Errorf("Gaps() = %+v, want %+v", got, want)
	}
	if got := (sandbox.Availability{}).Gaps(); got != nil {
		t.Errorf("no warning gave gaps %+v", got)
	}
	off := sandbox.Availability{Warning: "no confinement: the plugin reads what its user can; and writes"}
	if got := off.Gaps(); len(got) != 1 || got[0].What != off.Warning || got[0].Close != "" {
		t.Errorf("a warning in no form gave %+v, want it as one gap", got)
	}
}
