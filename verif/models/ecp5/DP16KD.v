`default_nettype none
// DP16KD: a simulation model of the Lattice ECP5 true dual-port block RAM, written from the ECP5 sysMEM usage guide
// (Lattice TN1264) and checked against yosys's mapping of inferred memories onto the cell (verif/models/tests). yosys
// ships only a black box of it. It covers what this project's netlists use: both ports the same width (1, 2, 4, 9 or
// 18 bits, or the 36-bit pseudo dual-port shape below), NORMAL, WRITETHROUGH and READBEFOREWRITE write modes, the output register (REGMODE "OUTREG", clocked
// when OCE is high), synchronous or asynchronous reset of the output, chip selects against CSDECODE, and INITVAL contents. Anything
// else stops the simulation instead of being modelled wrongly. A port reading a word that the other port writes at
// the same edge gets X (the silicon leaves it undefined).
//
// Address pins carry a bit address: the word address of a W-bit shape sits above log2 of (16,384 / depth) low bits;
// at 18 bits those are AD[3:0], of which AD[1:0] enable the two 9-bit halves of a write. The array is kept as 1,024
// rows of 18 bits (INITVAL's layout: 16 rows of 20 bits, 18 used, per parameter); a narrower shape's word is a field
// of a row. The 36-bit shape (DATA_WIDTH_A = DATA_WIDTH_B = 36, the primitive PDPW16KD's) is one way: port A writes,
// its DIA pins the low half, DIB the high half, ADA[13:5] the word and ADA[3:0] the enables of its four 9-bit bytes
// (low half first); port B reads, DOA the low half and DOB the high half, both through port B's clock enable,
// register and reset. Word w is rows 2w (low half) and 2w + 1.
`timescale 1ns / 1ps
/* verilator lint_off WIDTHEXPAND */  // string parameters of any length from the instantiations
module DP16KD (
  input  wire DIA17, DIA16, DIA15, DIA14, DIA13, DIA12, DIA11, DIA10, DIA9, DIA8, DIA7, DIA6, DIA5, DIA4, DIA3, DIA2, DIA1, DIA0,
  input  wire ADA13, ADA12, ADA11, ADA10, ADA9, ADA8, ADA7, ADA6, ADA5, ADA4, ADA3, ADA2, ADA1, ADA0,
  input  wire CEA, OCEA, CLKA, WEA, RSTA,
  input  wire CSA2, CSA1, CSA0,
  output wire DOA17, DOA16, DOA15, DOA14, DOA13, DOA12, DOA11, DOA10, DOA9, DOA8, DOA7, DOA6, DOA5, DOA4, DOA3, DOA2, DOA1, DOA0,
  input  wire DIB17, DIB16, DIB15, DIB14, DIB13, DIB12, DIB11, DIB10, DIB9, DIB8, DIB7, DIB6, DIB5, DIB4, DIB3, DIB2, DIB1, DIB0,
  input  wire ADB13, ADB12, ADB11, ADB10, ADB9, ADB8, ADB7, ADB6, ADB5, ADB4, ADB3, ADB2, ADB1, ADB0,
  input  wire CEB, OCEB, CLKB, WEB, RSTB,
  input  wire CSB2, CSB1, CSB0,
  output wire DOB17, DOB16, DOB15, DOB14, DOB13, DOB12, DOB11, DOB10, DOB9, DOB8, DOB7, DOB6, DOB5, DOB4, DOB3, DOB2, DOB1, DOB0
);
  parameter integer DATA_WIDTH_A = 18;
  parameter integer DATA_WIDTH_B = 18;
  parameter [159:0] REGMODE_A = "NOREG";
  parameter [159:0] REGMODE_B = "NOREG";
  parameter [159:0] RESETMODE = "SYNC";
  parameter [159:0] ASYNC_RESET_RELEASE = "SYNC";
  parameter [159:0] CSDECODE_A = "0b000";
  parameter [159:0] CSDECODE_B = "0b000";
  parameter [159:0] WRITEMODE_A = "NORMAL";
  parameter [159:0] WRITEMODE_B = "NORMAL";
  parameter [159:0] CLKAMUX = "CLKA";
  parameter [159:0] CLKBMUX = "CLKB";
  parameter [159:0] GSR = "ENABLED";
  parameter [159:0] INIT_DATA = "STATIC";
  parameter WID = 0;
  parameter INITVAL_00 = 320'h0;
  parameter INITVAL_01 = 320'h0;
  parameter INITVAL_02 = 320'h0;
  parameter INITVAL_03 = 320'h0;
  parameter INITVAL_04 = 320'h0;
  parameter INITVAL_05 = 320'h0;
  parameter INITVAL_06 = 320'h0;
  parameter INITVAL_07 = 320'h0;
  parameter INITVAL_08 = 320'h0;
  parameter INITVAL_09 = 320'h0;
  parameter INITVAL_0A = 320'h0;
  parameter INITVAL_0B = 320'h0;
  parameter INITVAL_0C = 320'h0;
  parameter INITVAL_0D = 320'h0;
  parameter INITVAL_0E = 320'h0;
  parameter INITVAL_0F = 320'h0;
  parameter INITVAL_10 = 320'h0;
  parameter INITVAL_11 = 320'h0;
  parameter INITVAL_12 = 320'h0;
  parameter INITVAL_13 = 320'h0;
  parameter INITVAL_14 = 320'h0;
  parameter INITVAL_15 = 320'h0;
  parameter INITVAL_16 = 320'h0;
  parameter INITVAL_17 = 320'h0;
  parameter INITVAL_18 = 320'h0;
  parameter INITVAL_19 = 320'h0;
  parameter INITVAL_1A = 320'h0;
  parameter INITVAL_1B = 320'h0;
  parameter INITVAL_1C = 320'h0;
  parameter INITVAL_1D = 320'h0;
  parameter INITVAL_1E = 320'h0;
  parameter INITVAL_1F = 320'h0;
  parameter INITVAL_20 = 320'h0;
  parameter INITVAL_21 = 320'h0;
  parameter INITVAL_22 = 320'h0;
  parameter INITVAL_23 = 320'h0;
  parameter INITVAL_24 = 320'h0;
  parameter INITVAL_25 = 320'h0;
  parameter INITVAL_26 = 320'h0;
  parameter INITVAL_27 = 320'h0;
  parameter INITVAL_28 = 320'h0;
  parameter INITVAL_29 = 320'h0;
  parameter INITVAL_2A = 320'h0;
  parameter INITVAL_2B = 320'h0;
  parameter INITVAL_2C = 320'h0;
  parameter INITVAL_2D = 320'h0;
  parameter INITVAL_2E = 320'h0;
  parameter INITVAL_2F = 320'h0;
  parameter INITVAL_30 = 320'h0;
  parameter INITVAL_31 = 320'h0;
  parameter INITVAL_32 = 320'h0;
  parameter INITVAL_33 = 320'h0;
  parameter INITVAL_34 = 320'h0;
  parameter INITVAL_35 = 320'h0;
  parameter INITVAL_36 = 320'h0;
  parameter INITVAL_37 = 320'h0;
  parameter INITVAL_38 = 320'h0;
  parameter INITVAL_39 = 320'h0;
  parameter INITVAL_3A = 320'h0;
  parameter INITVAL_3B = 320'h0;
  parameter INITVAL_3C = 320'h0;
  parameter INITVAL_3D = 320'h0;
  parameter INITVAL_3E = 320'h0;
  parameter INITVAL_3F = 320'h0;

  wire [17:0] dia = {DIA17, DIA16, DIA15, DIA14, DIA13, DIA12, DIA11, DIA10, DIA9, DIA8, DIA7, DIA6, DIA5, DIA4, DIA3, DIA2, DIA1, DIA0};
  wire [13:0] ada = {ADA13, ADA12, ADA11, ADA10, ADA9, ADA8, ADA7, ADA6, ADA5, ADA4, ADA3, ADA2, ADA1, ADA0};
  wire [17:0] dib = {DIB17, DIB16, DIB15, DIB14, DIB13, DIB12, DIB11, DIB10, DIB9, DIB8, DIB7, DIB6, DIB5, DIB4, DIB3, DIB2, DIB1, DIB0};
  wire [13:0] adb = {ADB13, ADB12, ADB11, ADB10, ADB9, ADB8, ADB7, ADB6, ADB5, ADB4, ADB3, ADB2, ADB1, ADB0};
  reg  [17:0] doa;
  reg  [17:0] dob;
  reg  [35:0] dow;  // the 36-bit shape's output: {DOB, DOA}
  assign {DOA17, DOA16, DOA15, DOA14, DOA13, DOA12, DOA11, DOA10, DOA9, DOA8, DOA7, DOA6, DOA5, DOA4, DOA3, DOA2, DOA1, DOA0} = (DATA_WIDTH_A == 36) ? dow[17:0] : doa;
  assign {DOB17, DOB16, DOB15, DOB14, DOB13, DOB12, DOB11, DOB10, DOB9, DOB8, DOB7, DOB6, DOB5, DOB4, DOB3, DOB2, DOB1, DOB0} = (DATA_WIDTH_A == 36) ? dow[35:18] : dob;

  localparam [20479:0] INITVALS = {INITVAL_3F, INITVAL_3E, INITVAL_3D, INITVAL_3C, INITVAL_3B, INITVAL_3A, INITVAL_39, INITVAL_38, INITVAL_37, INITVAL_36, INITVAL_35, INITVAL_34, INITVAL_33, INITVAL_32, INITVAL_31, INITVAL_30, INITVAL_2F, INITVAL_2E, INITVAL_2D, INITVAL_2C, INITVAL_2B, INITVAL_2A, INITVAL_29, INITVAL_28, INITVAL_27, INITVAL_26, INITVAL_25, INITVAL_24, INITVAL_23, INITVAL_22, INITVAL_21, INITVAL_20, INITVAL_1F, INITVAL_1E, INITVAL_1D, INITVAL_1C, INITVAL_1B, INITVAL_1A, INITVAL_19, INITVAL_18, INITVAL_17, INITVAL_16, INITVAL_15, INITVAL_14, INITVAL_13, INITVAL_12, INITVAL_11, INITVAL_10, INITVAL_0F, INITVAL_0E, INITVAL_0D, INITVAL_0C, INITVAL_0B, INITVAL_0A, INITVAL_09, INITVAL_08, INITVAL_07, INITVAL_06, INITVAL_05, INITVAL_04, INITVAL_03, INITVAL_02, INITVAL_01, INITVAL_00};
  localparam integer W = DATA_WIDTH_A;
  localparam integer WIDE = (W == 36) ? 1 : 0;
  localparam integer LOW = (W == 18) ? 4 : (W == 9) ? 3 : (W == 4) ? 2 : (W == 2) ? 1 : 0;
  localparam integer PER_ROW = (W == 18) ? 1 : (W == 9) ? 2 : (W == 4) ? 4 : (W == 2) ? 8 : 16;

  reg [17:0] mem [0:1023];
  reg [17:0] latch_a;  // the read (or write-mode) data of each port before its output register
  reg [17:0] latch_b;
  reg [35:0] latch_w;  // the 36-bit shape's read before its output register
  integer i;
  initial begin
    if (DATA_WIDTH_A != DATA_WIDTH_B || !(W == 1 || W == 2 || W == 4 || W == 9 || W == 18 || W == 36)) begin
      $display("ERROR: DP16KD model %m: widths %0d and %0d are not modelled (same width, 1, 2, 4, 9, 18 or 36)",
               DATA_WIDTH_A, DATA_WIDTH_B);
      $finish;
    end
    if (CLKAMUX != "CLKA" || CLKBMUX != "CLKB") begin
      $display("ERROR: DP16KD model %m: inverted clocks are not modelled");
      $finish;
    end
    for (i = 0; i < 1024; i = i + 1) begin
      mem[i] = INITVALS[20 * i +: 18];
    end
    latch_a = 18'd0;
    latch_b = 18'd0;
    doa = 18'd0;
    dob = 18'd0;
    dow = 36'd0;
    latch_w = 36'd0;
  end

  // The row and the field of a word address (a shape narrower than 18 bits keeps PER_ROW words in a row; a 9-bit
  // word is a half, narrower words sit in the 16 bits that are not the halves' ninth bits).
  function integer row_of(input [13:0] ad);
    row_of = {22'd0, ad[13:4]};
  endfunction
  function integer lsb_of(input [13:0] ad);
    integer k;
    begin
      k = ({18'd0, ad} >> LOW) % PER_ROW;
      lsb_of = (W == 9) ? 9 * k : (W == 18) ? 0 : (W * k) + ((W * k) / 8);
    end
  endfunction
  function [17:0] field_mask(input [13:0] ad);
    field_mask = (W == 18) ? {{9{ad[1]}}, {9{ad[0]}}} : ((18'd1 << W) - 18'd1) << lsb_of(ad);
  endfunction
  function [17:0] read_mask(input [13:0] ad);
    read_mask = (W == 18) ? {18{1'b1}} : field_mask(ad);
  endfunction
  function selected(input [159:0] csdecode, input [2:0] cs);
    selected = cs == {csdecode[16], csdecode[8], csdecode[0]};
  endfunction

  wire        sel_a = selected(CSDECODE_A, {CSA2, CSA1, CSA0});
  wire        sel_b = selected(CSDECODE_B, {CSB2, CSB1, CSB0});
  wire        wr_a = CEA && sel_a && WEA;
  wire        wr_b = CEB && sel_b && WEB;

  // A port's write of its field, and the value its output takes for a write (write mode) or a read.
  task automatic port_edge(input ce, input sel, input we, input [13:0] ad, input [17:0] di, input [159:0] mode,
                           input other_wr, input [13:0] other_ad, inout [17:0] latch);
    reg [17:0] m;
    reg [17:0] old;
    reg [17:0] word;
    begin
      if (ce && sel) begin
        m = field_mask(ad);
        old = mem[row_of(ad)];
        word = (W == 18) ? di : (di << lsb_of(ad));
        if (we) begin
          mem[row_of(ad)] = (old & ~m) | (word & m);
          if (mode == "WRITETHROUGH") begin
            latch = (W == 18) ? mem[row_of(ad)] : (mem[row_of(ad)] & m) >> lsb_of(ad);
          end else if (mode == "READBEFOREWRITE") begin
            latch = (W == 18) ? old : (old & m) >> lsb_of(ad);
          end else if (mode != "NORMAL") begin
            $display("ERROR: DP16KD model %m: write mode %0s is not modelled", mode);
            $finish;
          end
        end else if (other_wr && row_of(other_ad) == row_of(ad) && (field_mask(other_ad) & read_mask(ad)) != 18'd0) begin
          latch = 18'bx;  // read while the other port writes the word
        end else begin
          latch = (W == 18) ? old : (old & m) >> lsb_of(ad);
        end
      end
    end
  endtask

  // RESETMODE "ASYNC": the reset clears the outputs at once (SYNC: at the clock edge, below)
  always @(posedge RSTA) begin
    if (RESETMODE == "ASYNC") begin
      latch_a = 18'd0;
      doa <= 18'd0;
    end
  end
  always @(posedge RSTB) begin
    if (RESETMODE == "ASYNC") begin
      latch_b = 18'd0;
      dob <= 18'd0;
    end
  end

  reg [17:0] latch_a_prev;
  reg [17:0] latch_b_prev;
  // the 36-bit shape: port A writes the two rows of a word by byte, port B reads both rows
  reg [35:0] latch_w_prev;
  wire [9:0] row_wa = {ada[13:5], 1'b0};
  wire [9:0] row_wb = {adb[13:5], 1'b0};
  always @(posedge CLKA) begin
    if (WIDE != 0) begin
      if (CEA && sel_a && WEA) begin
        if (ada[0]) mem[row_wa][8:0] = dia[8:0];
        if (ada[1]) mem[row_wa][17:9] = dia[17:9];
        if (ada[2]) mem[row_wa + 10'd1][8:0] = dib[8:0];
        if (ada[3]) mem[row_wa + 10'd1][17:9] = dib[17:9];
      end else if (CEA && sel_a) begin
        $display("ERROR: DP16KD model %m: a read on port A of the 36-bit shape is not modelled");
        $finish;
      end
    end
  end
  always @(posedge CLKB) begin
    if (WIDE != 0) begin
      latch_w_prev = latch_w;
      if (RSTB) begin
        latch_w = 36'd0;
      end else if (CEB && sel_b) begin
        if (WEB) begin
          $display("ERROR: DP16KD model %m: a write on port B of the 36-bit shape is not modelled");
          $finish;
        end
        latch_w = (wr_a && ada[3:0] != 4'd0 && ada[13:5] == adb[13:5]) ? 36'bx : {mem[row_wb + 10'd1], mem[row_wb]};
      end
      if (REGMODE_B == "OUTREG") begin
        if (RSTB) dow <= 36'd0;
        else if (OCEB) dow <= latch_w_prev;
      end else begin
        dow <= latch_w;
      end
    end
  end
  always @(posedge CLKA) begin
    if (WIDE == 0) begin
      latch_a_prev = latch_a;
      if (RSTA) begin
        latch_a = 18'd0;
      end else begin
        port_edge(CEA, sel_a, WEA, ada, dia, WRITEMODE_A, wr_b, adb, latch_a);
      end
      if (REGMODE_A == "OUTREG") begin
        if (RSTA) doa <= 18'd0;
        else if (OCEA) doa <= latch_a_prev;
      end else begin
        doa <= latch_a;
      end
    end
  end
  always @(posedge CLKB) begin
    if (WIDE == 0) begin
      latch_b_prev = latch_b;
      if (RSTB) begin
        latch_b = 18'd0;
      end else begin
        port_edge(CEB, sel_b, WEB, adb, dib, WRITEMODE_B, wr_a, ada, latch_b);
      end
      if (REGMODE_B == "OUTREG") begin
        if (RSTB) dob <= 18'd0;
        else if (OCEB) dob <= latch_b_prev;
      end else begin
        dob <= latch_b;
      end
    end
  end

endmodule
`default_nettype wire
