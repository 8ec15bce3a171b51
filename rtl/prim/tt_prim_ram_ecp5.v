`default_nettype none
// tt_prim_ram_ecp5: tt_prim_ram on Lattice ECP5 DP16KD block RAMs (tt_prim_dp16kd_ecp5; the ports and behaviour are
// tt_prim_ram's). Port A writes, port B reads. yosys infers DP16KD without its output register; instantiated here,
// OUT_REG = 1 is the block RAM's own register (REGMODE_B "OUTREG"), with a clock-to-out of about 1 ns instead of the
// read's 5.8 ns (ECP5 data sheet).
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
      tt_prim_dp16kd_ecp5 #(.DATA_WIDTH(36), .OUT_REG(OUT_REG)) u_bram (
        .clk   (clk),
        .wr_en (wr_en),
        .ada   (ada),
        .dia   (dia),
        .dib   (dib),
        .rd_en (rd_en),
        .adb   (adb),
        .doa   (doa),
        .dob   (dob)
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
        tt_prim_dp16kd_ecp5 #(.DATA_WIDTH(MODE_W), .OUT_REG(OUT_REG)) u_bram (
          .clk   (clk),
          .wr_en (wr_en),
          .ada   (ada),
          .dia   (di),
          .dib   (18'd0),
          .rd_en (rd_en),
          .adb   (adb),
          .doa   (unused_doa),
          .dob   (dob)
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
