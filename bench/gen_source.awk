# Prints a C file of n functions (about 13 lines each; n=600: 7,804 lines) for
# bench/report_real.sh: gcc -O2 compiles it in about 9 s of CPU. Each
# function calls the one before it (seven in eight), so the inliner has work.
#   awk -v n=600 -f gen_source.awk >gen.c
BEGIN {
	print "#include <stdint.h>"
	print "#include <string.h>"
	print "struct s { int a, b; double c; char name[16]; };"
	for (i = 0; i < n; i++) {
		printf "int f%d(struct s *p, int n, const int *v)\n{\n", i
		printf "\tint acc = %d;\n", i
		printf "\tfor (int k = 0; k < n; k++) {\n"
		printf "\t\tswitch ((v[k] + %d) %% 5) {\n", i
		printf "\t\tcase 0: acc += p[k].a * %d; break;\n", i % 7 + 1
		printf "\t\tcase 1: acc ^= p[k].b << %d; break;\n", i % 5
		printf "\t\tcase 2: p[k].c = p[k].c * %d.5 + acc; break;\n", i % 3
		printf "\t\tdefault: acc += (int)strlen(p[k].name) + %s; break;\n", (i % 8 ? "f" (i - 1) "(p + 1, n - 1, v)" : "1")
		printf "\t\t}\n\t}\n"
		printf "\treturn acc;\n}\n"
	}
	printf "int entry(struct s *p, int n, const int *v) { return f%d(p, n, v); }\n", n - 1
}
