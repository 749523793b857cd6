package attachments_test

import (
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/attachments"
	"github.com/riskapi/riskapi/internal/problem"
)

func TestSanitizeFilename(t *testing.T) {
	tests := []struct{ in, want string }{
		{"report.pdf", "report.pdf"},
		{"../../../etc/passwd", "passwd"},
		{`C:\Users\me\report.pdf`, "report.pdf"},
		{"/abs/dir/", "dir"},
		{"..", ""},
		{".", ""},
		{"", ""},
		{"   ", ""},
		{"a\x00b\x1bc\x7fd\r\n.txt", "abcd.txt"},
		{"invoice\u202Efdp.exe", "invoicefdp.exe"}, // right-to-left override
		{"zero\u200Bwidth", "zerowidth"},
		{"bad\xffutf8", "bad\uFFFDutf8"},
		{"naïve résumé.docx", "naïve résumé.docx"},
		{strings.Repeat("a", 300), strings.Repeat("a", 255)},
		{strings.Repeat("é", 200), strings.Repeat("é", 127)}, // cut on a character boundary
	}
	for _, tt := range tests {
		if got := attachments.SanitizeFilename(tt.in); got != tt.want {
			t.Errorf("SanitizeFilename(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNewValidates(t *testing.T) {
	now := time.Now()
	_, err := attachments.New("att_x", "ten_x", "risk_x", attachments.Input{Filename: "../", Description: "\xff"}, now)
	p := problem.As(err)
	if p == nil || len(p.Errors) != 2 || p.Errors[0].Field != "file" || p.Errors[1].Field != "description" {
		t.Fatalf("New: %v", err)
	}
	a, err := attachments.New("att_x", "ten_x", "risk_x", attachments.Input{Filename: "a/b.txt", ContentType: "text/plain"}, now)
	if err != nil || a.Filename != "b.txt" {
		t.Fatalf("New: %+v, %v", a, err)
	}
}

func TestFilesPathRefusesNonIDs(t *testing.T) {
	f := attachments.Files{Dir: "/uploads"}
	for _, c := range [][2]string{{"../x", "att_0193b2c4d5e6f708192a3b4c5d6e7f80"}, {"ten_0193b2c4d5e6f708192a3b4c5d6e7f80", "../../etc"}} {
		if p, err := f.Path(c[0], c[1]); err == nil {
			t.Errorf("Path(%q, %q) = %q", c[0], c[1], p)
		}
	}
	p, err := f.Path("ten_0193b2c4d5e6f708192a3b4c5d6e7f80", "att_0193b2c4d5e6f708192a3b4c5d6e7f80")
	if err != nil || p != "/uploads/ten_0193b2c4d5e6f708192a3b4c5d6e7f80/att_0193b2c4d5e6f708192a3b4c5d6e7f80" {
		t.Errorf("Path = %q, %v", p, err)
	}
}
