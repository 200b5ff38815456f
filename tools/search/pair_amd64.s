#include "textflag.h"

// func pairIndexAVX2(p []byte, off1, off2 int, m *[4]byte) (cand, next int)
//
// Scans positions i = 0, 32, 64, ... while i+max(off1,off2)+32 <= len(p),
// testing 32 positions at once: (p[i+off1] | m[0]) == m[1] and
// (p[i+off2] | m[2]) == m[3]. cand is the first position passing both
// tests, or -1; next is the first position not scanned.
TEXT ·pairIndexAVX2(SB), NOSPLIT, $0-64
	MOVQ p_base+0(FP), SI
	MOVQ p_len+8(FP), BX
	MOVQ off1+24(FP), R8
	MOVQ off2+32(FP), R9
	MOVQ m+40(FP), DX
	MOVQ R8, AX
	CMPQ R9, AX
	CMOVQGT R9, AX
	SUBQ AX, BX
	SUBQ $32, BX // the last position a round may start at
	XORQ DI, DI
	VPBROADCASTB 0(DX), Y1
	VPBROADCASTB 1(DX), Y2
	VPBROADCASTB 2(DX), Y3
	VPBROADCASTB 3(DX), Y4
	LEAQ (SI)(R8*1), R10
	LEAQ (SI)(R9*1), R11

loop:
	CMPQ DI, BX
	JGT  none
	VMOVDQU (R10)(DI*1), Y5
	VMOVDQU (R11)(DI*1), Y6
	VPOR    Y1, Y5, Y5
	VPOR    Y3, Y6, Y6
	VPCMPEQB Y2, Y5, Y5
	VPCMPEQB Y4, Y6, Y6
	VPAND   Y5, Y6, Y5
	VPMOVMSKB Y5, AX
	TESTL   AX, AX
	JNZ     found
	ADDQ    $32, DI
	JMP     loop

found:
	BSFL AX, AX
	ADDQ DI, AX
	MOVQ AX, cand+48(FP)
	ADDQ $32, DI
	MOVQ DI, next+56(FP)
	VZEROUPPER
	RET

none:
	MOVQ $-1, cand+48(FP)
	MOVQ DI, next+56(FP)
	VZEROUPPER
	RET
