`default_nettype none
// tt_prim_ram_ecp5: tt_prim_ram on Lattice ECP5 DP16KD block RAMs (the ports and behaviour are tt_prim_ram's). Port A
// writes, port B reads. yosys infers DP16KD without its output register; instantiated here, OUT_REG = 1 is the block
// RAM's own register (REGMODE_B "OUTREG"), with a clock-to-out of about 1 ns instead of the read's 5.8 ns (ECP5 data sheet).
//
// One DP16KD holds 16,384 data bits in one of five shapes: 1024 x 18, 2048 x 9, 4096 x 4, 8192 x 2, 16384 x 1. The
// memory takes the widest shape whose depth holds DEPTH words and as many block RAMs side by side as WIDTH needs.
// Address pins carry a bit address: the word address sits above log2(18 / shape width) zero bits (4 at 18 bits
// wide, where ADA[1:0] are the two byte write enables instead).
// PARTS = 2 (two parts of up to 18 bits, up to 512 words; tt_prim_ram builds one memory per part otherwise) takes the
// 36-bit shape, port A writing 36 bits and port B reading them: part 0 on the A data pins, part 1 on the B pins, the
// four byte enables in ADA[3:0] (two per part) and the word address in AD[13:5].
module tt_prim_ram_ecp5 #(
  parameter integer WIDTH   = 16,
  parameter integer DEPTH   = 512,
  parameter integer AW      = 9,
  parameter integer OUT_REG = 0,
  parameter integer PARTS   = 1   // 1, or 2 in the 36-bit shape
) (
  input  wire             clk,
  input  wire             wr_en,
  input  wire [PARTS-1:0] wr_part,
  input  wire [AW-1:0]    wr_addr,
  input  wire [WIDTH-1:0] wr_data,
  input  wire             rd_en,
  input  wire [AW-1:0]    rd_addr,
  output wire [WIDTH-1:0] rd_data
);

  localparam integer PW = WIDTH / PARTS;

  generate
    if (DEPTH > 16384) begin : g_bad_depth
      error_tt_prim_ram_ecp5_DEPTH_must_be_at_most_16384 u_error ();
    end
    if (PARTS != 1 && !(PARTS == 2 && PW <= 18 && DEPTH <= 512 && WIDTH % 2 == 0)) begin : g_bad_parts
      error_tt_prim_ram_ecp5_PARTS_must_be_1_or_2_of_at_most_18_bits_and_512_words u_error ();
    end
  endgenerate

  generate
    if (PARTS == 2) begin : g_wide
      localparam integer IW = (DEPTH > 1) ? $clog2(DEPTH) : 1;
      wire [8:0]  wa;
      wire [8:0]  ra;
      if (IW < 9) begin : g_pad
        assign wa = {{(9-IW){1'b0}}, wr_addr[IW-1:0]};
        assign ra = {{(9-IW){1'b0}}, rd_addr[IW-1:0]};
      end else begin : g_full
        assign wa = wr_addr[8:0];
        assign ra = rd_addr[8:0];
      end
      wire [13:0] ada = {wa, 1'b0, {2{wr_part[1]}}, {2{wr_part[0]}}};
      wire [13:0] adb = {ra, 5'b00000};
      wire [17:0] dia = {{(18-PW){1'b0}}, wr_data[PW-1:0]};
      wire [17:0] dib = {{(18-PW){1'b0}}, wr_data[2*PW-1:PW]};
      wire [17:0] doa;
      wire [17:0] dob;
      DP16KD #(
        .DATA_WIDTH_A (36),
        .DATA_WIDTH_B (36),
        .REGMODE_A    ("NOREG"),
        .REGMODE_B    ((OUT_REG != 0) ? "OUTREG" : "NOREG"),
        .RESETMODE    ("SYNC"),
        .CSDECODE_A   ("0b000"),
        .CSDECODE_B   ("0b000"),
        .WRITEMODE_A  ("NORMAL"),
        .WRITEMODE_B  ("NORMAL"),
        .GSR          ("DISABLED")
      ) u_bram (
        .DIA17(dia[17]), .DIA16(dia[16]), .DIA15(dia[15]), .DIA14(dia[14]), .DIA13(dia[13]),
        .DIA12(dia[12]), .DIA11(dia[11]), .DIA10(dia[10]), .DIA9(dia[9]), .DIA8(dia[8]), .DIA7(dia[7]),
        .DIA6(dia[6]), .DIA5(dia[5]), .DIA4(dia[4]), .DIA3(dia[3]), .DIA2(dia[2]), .DIA1(dia[1]),
        .DIA0(dia[0]),
        .ADA13(ada[13]), .ADA12(ada[12]), .ADA11(ada[11]), .ADA10(ada[10]), .ADA9(ada[9]),
        .ADA8(ada[8]), .ADA7(ada[7]), .ADA6(ada[6]), .ADA5(ada[5]), .ADA4(ada[4]), .ADA3(ada[3]),
        .ADA2(ada[2]), .ADA1(ada[1]), .ADA0(ada[0]),
        .CEA(wr_en), .OCEA(1'b0), .CLKA(clk), .WEA(wr_en), .RSTA(1'b0), .CSA2(1'b0), .CSA1(1'b0),
        .CSA0(1'b0),
        .DOA17(doa[17]), .DOA16(doa[16]), .DOA15(doa[15]), .DOA14(doa[14]), .DOA13(doa[13]),
        .DOA12(doa[12]), .DOA11(doa[11]), .DOA10(doa[10]), .DOA9(doa[9]), .DOA8(doa[8]),
        .DOA7(doa[7]), .DOA6(doa[6]), .DOA5(doa[5]), .DOA4(doa[4]), .DOA3(doa[3]), .DOA2(doa[2]),
        .DOA1(doa[1]), .DOA0(doa[0]),
        .DIB17(dib[17]), .DIB16(dib[16]), .DIB15(dib[15]), .DIB14(dib[14]), .DIB13(dib[13]),
        .DIB12(dib[12]), .DIB11(dib[11]), .DIB10(dib[10]), .DIB9(dib[9]), .DIB8(dib[8]), .DIB7(dib[7]),
        .DIB6(dib[6]), .DIB5(dib[5]), .DIB4(dib[4]), .DIB3(dib[3]), .DIB2(dib[2]), .DIB1(dib[1]),
        .DIB0(dib[0]),
        .ADB13(adb[13]), .ADB12(adb[12]), .ADB11(adb[11]), .ADB10(adb[10]), .ADB9(adb[9]),
        .ADB8(adb[8]), .ADB7(adb[7]), .ADB6(adb[6]), .ADB5(adb[5]), .ADB4(adb[4]), .ADB3(adb[3]),
        .ADB2(adb[2]), .ADB1(adb[1]), .ADB0(adb[0]),
        .CEB(rd_en), .OCEB(1'b1), .CLKB(clk), .WEB(1'b0), .RSTB(1'b0), .CSB2(1'b0), .CSB1(1'b0),
        .CSB0(1'b0),
        .DOB17(dob[17]), .DOB16(dob[16]), .DOB15(dob[15]), .DOB14(dob[14]), .DOB13(dob[13]),
        .DOB12(dob[12]), .DOB11(dob[11]), .DOB10(dob[10]), .DOB9(dob[9]), .DOB8(dob[8]),
        .DOB7(dob[7]), .DOB6(dob[6]), .DOB5(dob[5]), .DOB4(dob[4]), .DOB3(dob[3]), .DOB2(dob[2]),
        .DOB1(dob[1]), .DOB0(dob[0])
      );
      assign rd_data = {dob[PW-1:0], doa[PW-1:0]};
      wire unused_wide = ^{wr_addr, rd_addr, doa, dob};
    end else begin : g_tiles
      localparam integer MODE_W = (DEPTH <= 1024) ? 18 : (DEPTH <= 2048) ? 9 : (DEPTH <= 4096) ? 4 :
                                  (DEPTH <= 8192) ? 2 : 1;  // the shape's data width
      localparam integer LOW = (MODE_W == 18) ? 4 : (MODE_W == 9) ? 3 : (MODE_W == 4) ? 2 : (MODE_W == 2) ? 1 : 0;
      localparam integer MW = 14 - LOW;  // word address bits of the shape
      localparam integer TILES = (WIDTH + MODE_W - 1) / MODE_W;
      localparam integer IW = (DEPTH > 1) ? $clog2(DEPTH) : 1;  // the address bits that name a word

      // The word addresses at the shape's width, and the pins: the 18-bit shape's byte write enables in ADA[1:0], the
      // other shapes' low address bits 0.
      wire [MW-1:0] wa;
      wire [MW-1:0] ra;
      wire [13:0]   ada;
      wire [13:0]   adb;
      if (MW > IW) begin : g_pad
        assign wa = {{(MW-IW){1'b0}}, wr_addr[IW-1:0]};
        assign ra = {{(MW-IW){1'b0}}, rd_addr[IW-1:0]};
      end else begin : g_full
        assign wa = wr_addr[MW-1:0];
        assign ra = rd_addr[MW-1:0];
      end
      if (MODE_W == 18) begin : g_pins18
        assign ada = {wa, 4'b0011};
        assign adb = {ra, 4'b0000};
      end else if (LOW > 0) begin : g_pins
        assign ada = {wa, {LOW{1'b0}}};
        assign adb = {ra, {LOW{1'b0}}};
      end else begin : g_pins1
        assign ada = wa;
        assign adb = ra;
      end
      wire [17:0] zero18 = 18'd0;
      wire [TILES*MODE_W-1:0] wdata;
      wire [TILES*MODE_W-1:0] rdata;
      wire unused_addr = ^{wr_addr, rd_addr, wr_part};
      if (TILES * MODE_W > WIDTH) begin : g_wpad
        assign wdata = {{(TILES*MODE_W-WIDTH){1'b0}}, wr_data};
      end else begin : g_wfull
        assign wdata = wr_data;
      end

      genvar t;
      for (t = 0; t < TILES; t = t + 1) begin : g_tile
        wire [17:0] di;
        if (MODE_W < 18) begin : g_dpad
          assign di = {{(18-MODE_W){1'b0}}, wdata[MODE_W*t +: MODE_W]};
        end else begin : g_dfull
          assign di = wdata[MODE_W*t +: MODE_W];
        end
        wire [17:0] dob;
        wire [17:0] unused_doa;
        DP16KD #(
          .DATA_WIDTH_A (MODE_W),
          .DATA_WIDTH_B (MODE_W),
          .REGMODE_A    ("NOREG"),
          .REGMODE_B    ((OUT_REG != 0) ? "OUTREG" : "NOREG"),
          .RESETMODE    ("SYNC"),
          .CSDECODE_A   ("0b000"),
          .CSDECODE_B   ("0b000"),
          .WRITEMODE_A  ("NORMAL"),
          .WRITEMODE_B  ("NORMAL"),
          .GSR          ("DISABLED")
        ) u_bram (
          .DIA17(di[17]), .DIA16(di[16]), .DIA15(di[15]), .DIA14(di[14]), .DIA13(di[13]),
          .DIA12(di[12]), .DIA11(di[11]), .DIA10(di[10]), .DIA9(di[9]), .DIA8(di[8]), .DIA7(di[7]),
          .DIA6(di[6]), .DIA5(di[5]), .DIA4(di[4]), .DIA3(di[3]), .DIA2(di[2]), .DIA1(di[1]),
          .DIA0(di[0]),
          .ADA13(ada[13]), .ADA12(ada[12]), .ADA11(ada[11]), .ADA10(ada[10]), .ADA9(ada[9]),
          .ADA8(ada[8]), .ADA7(ada[7]), .ADA6(ada[6]), .ADA5(ada[5]), .ADA4(ada[4]), .ADA3(ada[3]),
          .ADA2(ada[2]), .ADA1(ada[1]), .ADA0(ada[0]),
          .CEA(wr_en), .OCEA(1'b0), .CLKA(clk), .WEA(wr_en), .RSTA(1'b0), .CSA2(1'b0), .CSA1(1'b0),
          .CSA0(1'b0),
          .DOA17(unused_doa[17]), .DOA16(unused_doa[16]), .DOA15(unused_doa[15]),
          .DOA14(unused_doa[14]), .DOA13(unused_doa[13]), .DOA12(unused_doa[12]),
          .DOA11(unused_doa[11]), .DOA10(unused_doa[10]), .DOA9(unused_doa[9]), .DOA8(unused_doa[8]),
          .DOA7(unused_doa[7]), .DOA6(unused_doa[6]), .DOA5(unused_doa[5]), .DOA4(unused_doa[4]),
          .DOA3(unused_doa[3]), .DOA2(unused_doa[2]), .DOA1(unused_doa[1]), .DOA0(unused_doa[0]),
          .DIB17(zero18[17]), .DIB16(zero18[16]), .DIB15(zero18[15]), .DIB14(zero18[14]),
          .DIB13(zero18[13]), .DIB12(zero18[12]), .DIB11(zero18[11]), .DIB10(zero18[10]),
          .DIB9(zero18[9]), .DIB8(zero18[8]), .DIB7(zero18[7]), .DIB6(zero18[6]), .DIB5(zero18[5]),
          .DIB4(zero18[4]), .DIB3(zero18[3]), .DIB2(zero18[2]), .DIB1(zero18[1]), .DIB0(zero18[0]),
          .ADB13(adb[13]), .ADB12(adb[12]), .ADB11(adb[11]), .ADB10(adb[10]), .ADB9(adb[9]),
          .ADB8(adb[8]), .ADB7(adb[7]), .ADB6(adb[6]), .ADB5(adb[5]), .ADB4(adb[4]), .ADB3(adb[3]),
          .ADB2(adb[2]), .ADB1(adb[1]), .ADB0(adb[0]),
          .CEB(rd_en), .OCEB(1'b1), .CLKB(clk), .WEB(1'b0), .RSTB(1'b0), .CSB2(1'b0), .CSB1(1'b0),
          .CSB0(1'b0),
          .DOB17(dob[17]), .DOB16(dob[16]), .DOB15(dob[15]), .DOB14(dob[14]), .DOB13(dob[13]),
          .DOB12(dob[12]), .DOB11(dob[11]), .DOB10(dob[10]), .DOB9(dob[9]), .DOB8(dob[8]),
          .DOB7(dob[7]), .DOB6(dob[6]), .DOB5(dob[5]), .DOB4(dob[4]), .DOB3(dob[3]), .DOB2(dob[2]),
          .DOB1(dob[1]), .DOB0(dob[0])
        );
        assign rdata[MODE_W*t +: MODE_W] = dob[MODE_W-1:0];
        wire unused_dob = ^{unused_doa, dob};
      end
      assign rd_data = rdata[WIDTH-1:0];
      wire unused_rdata = ^rdata;  // the last block RAM's bits past WIDTH
    end
  endgenerate

endmodule
`default_nettype wire
