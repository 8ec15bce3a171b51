`default_nettype none
// tt_prim_dp16kd_ecp5: one Lattice ECP5 DP16KD block RAM with its pins as buses, so that tt_prim_ram_ecp5 names each
// pin once for all its shapes. Port A writes (the data on dia, and on dib as well in the 36-bit shape), port B
// reads (the data on dob, and on doa as well in the 36-bit shape). The caller lays out the address pins of its
// shape: the word address above the bit-address zeros, or the byte write enables in the low pins of ada.
module tt_prim_dp16kd_ecp5 #(
  parameter integer DATA_WIDTH = 18,  // the shape: 1, 2, 4, 9, 18, or 36 (both ports' data pins, one port each way)
  parameter integer OUT_REG    = 0    // 1: the block RAM's own output register on port B (REGMODE_B "OUTREG")
) (
  input  wire        clk,
  input  wire        wr_en,
  input  wire [13:0] ada,
  input  wire [17:0] dia,
  input  wire [17:0] dib,
  input  wire        rd_en,
  input  wire [13:0] adb,
  output wire [17:0] doa,
  output wire [17:0] dob
);

  generate
    if (DATA_WIDTH != 1 && DATA_WIDTH != 2 && DATA_WIDTH != 4 && DATA_WIDTH != 9 && DATA_WIDTH != 18 &&
        DATA_WIDTH != 36) begin : g_bad_width
      error_tt_prim_dp16kd_ecp5_DATA_WIDTH_must_be_1_2_4_9_18_or_36 u_error ();
    end
  endgenerate

  DP16KD #(
    .DATA_WIDTH_A (DATA_WIDTH),
    .DATA_WIDTH_B (DATA_WIDTH),
    .REGMODE_A    ("NOREG"),
    .REGMODE_B    ((OUT_REG != 0) ? "OUTREG" : "NOREG"),
    .RESETMODE    ("SYNC"),
    .CSDECODE_A   ("0b000"),
    .CSDECODE_B   ("0b000"),
    .WRITEMODE_A  ("NORMAL"),
    .WRITEMODE_B  ("NORMAL"),
    .GSR          ("DISABLED")
  ) u_cell (
    .DIA17(dia[17]), .DIA16(dia[16]), .DIA15(dia[15]), .DIA14(dia[14]), .DIA13(dia[13]), .DIA12(dia[12]),
    .DIA11(dia[11]), .DIA10(dia[10]), .DIA9(dia[9]), .DIA8(dia[8]), .DIA7(dia[7]), .DIA6(dia[6]),
    .DIA5(dia[5]), .DIA4(dia[4]), .DIA3(dia[3]), .DIA2(dia[2]), .DIA1(dia[1]), .DIA0(dia[0]),
    .ADA13(ada[13]), .ADA12(ada[12]), .ADA11(ada[11]), .ADA10(ada[10]), .ADA9(ada[9]), .ADA8(ada[8]),
    .ADA7(ada[7]), .ADA6(ada[6]), .ADA5(ada[5]), .ADA4(ada[4]), .ADA3(ada[3]), .ADA2(ada[2]),
    .ADA1(ada[1]), .ADA0(ada[0]),
    .CEA(wr_en), .OCEA(1'b0), .CLKA(clk), .WEA(wr_en), .RSTA(1'b0), .CSA2(1'b0), .CSA1(1'b0), .CSA0(1'b0),
    .DOA17(doa[17]), .DOA16(doa[16]), .DOA15(doa[15]), .DOA14(doa[14]), .DOA13(doa[13]), .DOA12(doa[12]),
    .DOA11(doa[11]), .DOA10(doa[10]), .DOA9(doa[9]), .DOA8(doa[8]), .DOA7(doa[7]), .DOA6(doa[6]),
    .DOA5(doa[5]), .DOA4(doa[4]), .DOA3(doa[3]), .DOA2(doa[2]), .DOA1(doa[1]), .DOA0(doa[0]),
    .DIB17(dib[17]), .DIB16(dib[16]), .DIB15(dib[15]), .DIB14(dib[14]), .DIB13(dib[13]), .DIB12(dib[12]),
    .DIB11(dib[11]), .DIB10(dib[10]), .DIB9(dib[9]), .DIB8(dib[8]), .DIB7(dib[7]), .DIB6(dib[6]),
    .DIB5(dib[5]), .DIB4(dib[4]), .DIB3(dib[3]), .DIB2(dib[2]), .DIB1(dib[1]), .DIB0(dib[0]),
    .ADB13(adb[13]), .ADB12(adb[12]), .ADB11(adb[11]), .ADB10(adb[10]), .ADB9(adb[9]), .ADB8(adb[8]),
    .ADB7(adb[7]), .ADB6(adb[6]), .ADB5(adb[5]), .ADB4(adb[4]), .ADB3(adb[3]), .ADB2(adb[2]),
    .ADB1(adb[1]), .ADB0(adb[0]),
    .CEB(rd_en), .OCEB(1'b1), .CLKB(clk), .WEB(1'b0), .RSTB(1'b0), .CSB2(1'b0), .CSB1(1'b0), .CSB0(1'b0),
    .DOB17(dob[17]), .DOB16(dob[16]), .DOB15(dob[15]), .DOB14(dob[14]), .DOB13(dob[13]), .DOB12(dob[12]),
    .DOB11(dob[11]), .DOB10(dob[10]), .DOB9(dob[9]), .DOB8(dob[8]), .DOB7(dob[7]), .DOB6(dob[6]),
    .DOB5(dob[5]), .DOB4(dob[4]), .DOB3(dob[3]), .DOB2(dob[2]), .DOB1(dob[1]), .DOB0(dob[0])
  );

endmodule
`default_nettype wire
