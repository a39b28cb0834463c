# mpa/fpdu.mk: FPDU framing, markers, deframer
